"""How a repository gates metrics: golden files, tolerance and threshold comparisons, timeouts.

Python sources (``*.py`` and ``*.py.txt`` excerpts) are parsed with :mod:`ast`,
never imported or executed. An excerpt that is not valid Python because it
elides lines with ``...`` (``{"a": 1, ...}``) is parsed again with those lines
removed. What is recognised, with the defaults used when an argument is
omitted (from each library's documentation):

==============================================  ==========  =====================================
call / statement                                kind        tolerance
==============================================  ==========  =====================================
``pytest.approx(e, rel=, abs=)``                approx      rel 1e-6, abs 1e-12; abs only -> no rel
``numpy.testing.assert_allclose(a, d, ...)``    allclose    rtol 1e-7, atol 0
``torch.testing.assert_close(a, d, ...)``       allclose    rtol 1.3e-6, atol 1e-5 (float32)
``numpy.isclose`` / ``allclose``                isclose     rtol 1e-5, atol 1e-8
``math.isclose(a, b, rel_tol=, abs_tol=)``      isclose     rel_tol 1e-9, abs_tol 0
``assert_array_almost_equal(decimal=d)``        isclose     atol 1.5 * 10**-d (d = 6 default)
``assert_array_equal`` / ``assert a == b``      exact       none
Megatron ``DeterministicTest()``                deterministic  exact at every step
Megatron ``ApproximateTest(atol=, rtol=)``      approximate rtol 1e-5, atol 0
``assert elapsed < 60`` (time words)            timing      the constant
``assert throughput > 1000`` (speed words)      throughput  the constant
``assert loss < 2.5`` (other metric words)      threshold   the constant
``@pytest.mark.timeout(n)``, ``timeout=n``      timeout     n seconds
CI YAML ``timeout-minutes:`` / ``timeout:``     timeout     converted to seconds
``X_RTOL = 0.05`` style assignments             tolerance   the constant
==============================================  ==========  =====================================
"""

from __future__ import annotations

import ast
import functools
import re
from collections.abc import Iterator
from pathlib import Path

from .model import Gate, Line

SKIP_DIRS = {
    ".git",
    ".hg",
    "node_modules",
    ".venv",
    "venv",
    "env",
    "__pycache__",
    ".tox",
    ".nox",
    "build",
    "dist",
    ".mypy_cache",
    ".pytest_cache",
    ".ruff_cache",
    "site-packages",
    ".eggs",
}
#: Repository walk limits: files larger than this are not read; the walk stops after MAX_FILES files.
MAX_BYTES = 2_000_000
MAX_FILES = 20_000

_GOLDEN_NAME = re.compile(
    r"golden|expected[_\-]?(values|metrics|results)|reference[_\-]?(values|metrics)|"
    r"baseline[_\-]?(values|metrics)",
    re.IGNORECASE,
)
_DATA_EXT = (".json", ".csv", ".jsonl", ".tsv")
_TIME_WORDS = re.compile(
    r"time|elapsed|duration|latency|second|secs|(^|_)s$|wall|runtime|minutes", re.IGNORECASE
)
_SPEED_WORDS = re.compile(
    r"throughput|per_?sec|per_?second|samples_per|tokens_per|it_?s\b|speed|qps|fps|"
    r"tflops|mfu",
    re.IGNORECASE,
)
_METRIC_WORDS = re.compile(
    r"loss|acc|accuracy|f1|auc|bleu|rouge|perplexity|ppl|wer|cer|iou|map|precision|"
    r"recall|score|zeros|grad|norm|mem|metric|golden|expected|value",
    re.IGNORECASE,
)
_AFFIX = re.compile(
    r"^(golden|expected|actual|ref|reference|baseline|new|old|measured|observed)_|"
    r"_(golden|expected|actual|ref|reference|baseline|values?|list|arr|array)$",
    re.IGNORECASE,
)
_TOL_NAME = re.compile(r"rtol|atol|tol(erance)?$|tolerance|margin|threshold", re.IGNORECASE)
_CHECKED = re.compile(r"^(default_|checked_|check_)?metrics(_to_check|_checked)?$", re.IGNORECASE)
_CHECKED_COMMENT = re.compile(
    r"checked metrics[^\[]*(\[[^\]]*\])|metrics checked[^\[]*(\[[^\]]*\])", re.IGNORECASE
)
#: a source without any of these cannot hold a gate this module recognises; it is not parsed
_GATE_TOKENS = re.compile(
    r"approx|close|assert|rtol|atol|tol|timeout|Test\(|METRICS|metrics|threshold|margin|"
    r"raise|\.fail\(|exit\("
)
_CI_TIMEOUT = re.compile(
    r"^\s*-?\s*(timeout-minutes|timeout_in_minutes|timeout)\s*:\s*(.+)$", re.IGNORECASE
)


def iter_files(repo: Path) -> Iterator[Path]:
    """Files of ``repo`` in sorted order, skipping VCS/virtualenv/cache directories and huge files."""
    n = 0
    stack = [repo]
    while stack:
        d = stack.pop()
        try:
            entries = sorted(d.iterdir(), key=lambda p: p.name)
        except OSError:
            continue
        # sub-directories pushed in reverse so they are visited in name order
        stack += [
            p
            for p in reversed(entries)
            if p.is_dir() and not p.is_symlink() and p.name not in SKIP_DIRS
        ]
        for p in entries:
            if p.is_symlink() or p.is_dir():
                continue
            try:
                if p.stat().st_size > MAX_BYTES:
                    continue
            except OSError:
                continue
            n += 1
            if n > MAX_FILES:
                return
            yield p


def is_golden_file(path: Path) -> bool:
    return path.suffix.lower() in _DATA_EXT and bool(_GOLDEN_NAME.search(path.name))


_LINE = re.compile(r"[^\r\n]*(?:\r\n?|\n)|[^\r\n]+\Z")


@functools.lru_cache(maxsize=4)
def _source_lines(text: str) -> tuple[str, ...]:
    """``text`` split into lines as :mod:`ast` numbers them (``\\n``, ``\\r\\n``, ``\\r``; ends
    kept), once per file: ``ast.get_source_segment`` splits the whole source on every call,
    which made a test of 2,000 asserts take 100 s (quadratic) in ``mlaudit ci``."""
    return tuple(_LINE.findall(text))


def _source_segment(text: str, node: ast.AST) -> str | None:
    """``ast.get_source_segment(text, node)`` over :func:`_source_lines` (columns are UTF-8
    byte offsets, as in :mod:`ast`); None when the node has no position or lies outside."""
    try:
        first, last = node.lineno - 1, node.end_lineno - 1  # type: ignore[attr-defined]
        col, end_col = node.col_offset, node.end_col_offset  # type: ignore[attr-defined]
    except AttributeError:
        return None
    if last is None or end_col is None:
        return None
    lines = _source_lines(text)
    if not 0 <= first <= last < len(lines):
        return None
    if first == last:
        return lines[first].encode()[col:end_col].decode()
    head = lines[first].encode()[col:].decode()
    tail = lines[last].encode()[:end_col].decode()
    return "".join([head, *lines[first + 1 : last], tail])


def _seg(text: str, node: ast.AST) -> str:
    s = _source_segment(text, node) or ""
    s = re.sub(r"\s+", " ", s).strip()
    return s if len(s) <= 240 else s[:237] + "..."


def _name(node: ast.AST) -> str:
    """Dotted name of a call target: ``np.testing.assert_allclose``; '' when not a plain name chain."""
    parts = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    if isinstance(node, ast.Name):
        parts.append(node.id)
    elif isinstance(node, ast.Call):
        inner = _name(node.func)
        if inner:
            parts.append(inner)
    return ".".join(reversed(parts))


def _num(node: ast.AST | None, consts: Consts) -> float | None:
    if node is None:
        return None
    if (
        isinstance(node, ast.Constant)
        and isinstance(node.value, (int, float))
        and not isinstance(node.value, bool)
    ):
        return float(node.value)
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub):
        v = _num(node.operand, consts)
        return -v if v is not None else None
    if isinstance(node, ast.Name) and node.id in consts:
        return consts[node.id]
    if isinstance(node, ast.Subscript):  # GOLDEN["rtol"]: a value read from a data file
        data = getattr(consts, "data", None)
        if data:
            v = _subscript_value(node, data)
            if isinstance(v, (int, float)) and not isinstance(v, bool):
                return float(v)
    if isinstance(node, ast.Attribute) and node.attr in consts:
        return consts[node.attr]
    if isinstance(node, ast.BinOp) and isinstance(node.op, (ast.Mult, ast.Div, ast.Pow)):
        a, b = _num(node.left, consts), _num(node.right, consts)
        if a is not None and b is not None:
            try:
                return (
                    a * b
                    if isinstance(node.op, ast.Mult)
                    else a / b
                    if isinstance(node.op, ast.Div)
                    else a**b
                )
            except (ZeroDivisionError, OverflowError):
                return None
    return None


class Consts(dict):
    """Module constants for :func:`_num`, plus ``data``: names bound to loaded JSON documents
    (``GOLDEN = json.load(open("golden.json"))``) so ``GOLDEN["rtol"]`` resolves, and
    ``sources`` naming the file each came from."""

    def __init__(self, *a, data=None, sources=None, **kw):
        super().__init__(*a, **kw)
        self.data = data or {}
        self.sources = sources or {}


def _subscript_value(node: ast.AST, data: dict):
    """``NAME["a"]["b"]`` looked up in ``data[NAME]``; ``None`` when not a constant-key chain."""
    keys = []
    while isinstance(node, ast.Subscript):
        sl = node.slice
        if not (isinstance(sl, ast.Constant) and isinstance(sl.value, (str, int))):
            return None
        keys.append(sl.value)
        node = node.value
    if not isinstance(node, ast.Name) or node.id not in data:
        return None
    cur = data[node.id]
    for k in reversed(keys):
        try:
            cur = cur[k]
        except (KeyError, IndexError, TypeError):
            return None
    return cur


def subscript_root(node: ast.AST) -> str | None:
    while isinstance(node, ast.Subscript):
        node = node.value
    return node.id if isinstance(node, ast.Name) else None


def const_index(node: ast.AST) -> int | None:
    """``x[-1]`` / ``x[0]`` -> the constant integer index, else ``None``."""
    if isinstance(node, ast.Subscript):
        sl = node.slice
        if isinstance(sl, ast.UnaryOp) and isinstance(sl.op, ast.USub):
            if isinstance(sl.operand, ast.Constant) and isinstance(sl.operand.value, int):
                sl = ast.Constant(-sl.operand.value)
        if (
            isinstance(sl, ast.Constant)
            and isinstance(sl.value, int)
            and not isinstance(sl.value, bool)
        ):
            return sl.value
    return None


def _kw(call: ast.Call, *names: str) -> ast.AST | None:
    for k in call.keywords:
        if k.arg in names:
            return k.value
    return None


def metric_of(node: ast.AST) -> str | None:
    """The metric a comparison is about: a string key (``m["lm loss"]``) or a metric-like identifier."""
    for sub in ast.walk(node):
        if isinstance(sub, ast.Subscript):
            sl = sub.slice
            if isinstance(sl, ast.Constant) and isinstance(sl.value, str) and _plausible(sl.value):
                return sl.value
    for sub in ast.walk(node):
        if (
            isinstance(sub, ast.Constant)
            and isinstance(sub.value, str)
            and _plausible(sub.value)
            and _METRIC_WORDS.search(sub.value)
        ):
            return sub.value
    for sub in ast.walk(node):
        ident = (
            sub.id
            if isinstance(sub, ast.Name)
            else sub.attr
            if isinstance(sub, ast.Attribute)
            else None
        )
        if ident and (
            _METRIC_WORDS.search(ident) or _TIME_WORDS.search(ident) or _SPEED_WORDS.search(ident)
        ):
            base = ident
            for _ in range(2):
                base = _AFFIX.sub("", base)
            if base and base.lower() not in (
                "golden",
                "expected",
                "actual",
                "value",
                "values",
                "metric",
                "metrics",
            ):
                return base
    return None


_GENERIC = {
    "values",
    "value",
    "data",
    "metrics",
    "metric",
    "golden",
    "expected",
    "actual",
    "steps",
    "step",
    "results",
    "result",
    "start_step",
    "end_step",
    "step_interval",
    "r",
    "rb",
    "w",
    "utf-8",
}


def _plausible(s: str) -> bool:
    return (
        0 < len(s) <= 48
        and s.lower() not in _GENERIC
        and bool(re.search(r"[A-Za-z]", s))
        and not re.search(r"\.(json|csv|ya?ml|txt|py|log)$|/|\\|%|\{", s)
    )


#: Comparison operators of a gate, and the operator when the sides are swapped (``bound < x``)
#: or the comparison is negated (``if x > bound: raise``).
_COMPARE_OPS = {
    ast.Lt: "<",
    ast.LtE: "<=",
    ast.Gt: ">",
    ast.GtE: ">=",
    ast.Eq: "==",
    ast.NotEq: "!=",
}
_FLIPPED = {"<": ">", "<=": ">=", ">": "<", ">=": "<="}
_NEGATED = {"<": ">=", "<=": ">", ">": "<=", ">=": "<"}
_ABS_FUNCS = ("abs", "np.abs", "numpy.abs", "math.fabs")


def _is_abs_diff(measured: ast.AST) -> bool:
    """The measured side holds an absolute value and a difference (``abs(a - b)``)."""
    nodes = list(ast.walk(measured))
    has_diff = any(isinstance(s, ast.BinOp) and isinstance(s.op, ast.Sub) for s in nodes)
    has_abs = any(isinstance(s, ast.Call) and _name(s.func) in _ABS_FUNCS for s in nodes)
    return has_abs and has_diff


class _Scanner:
    def __init__(self, text: str, rel: str, data: dict | None = None, sources=None) -> None:
        self.text, self.rel = text, rel
        self.gates: list[Gate] = []
        self.checked: list[str] | None = None
        self.checked_line: Line | None = None
        self.consts: Consts = Consts(data=data, sources=sources)
        self.named_sources: dict[str, str] = {}
        self.parent: dict[int, ast.AST] = {}

    def func_of(self, node: ast.AST) -> str | None:
        cur = self.parent.get(id(node))
        while cur is not None:
            if isinstance(cur, (ast.FunctionDef, ast.AsyncFunctionDef)):
                return cur.name
            cur = self.parent.get(id(cur))
        return None

    def tol_source(self, *nodes) -> str:
        """``golden_values.json["rtol"]`` when a tolerance argument is read from a data file."""
        out = []
        for n in nodes:
            if isinstance(n, ast.Subscript):
                root = subscript_root(n)
                src = self.consts.sources.get(root) if root else None
                v = _num(n, self.consts)
                if src and v is not None:
                    out.append(f"{_seg(self.text, n)} = {v:g} from {src}")
        return "; ".join(out)

    def add(self, node: ast.AST, kind: str, **kw) -> None:
        line = getattr(node, "lineno", 0)
        self.gates.append(
            Gate(self.rel, line, _seg(self.text, node), kind, function=self.func_of(node), **kw)
        )

    def run(self, tree: ast.Module) -> None:
        # one pass: parent links and every node in breadth-first order (the order ast.walk gives)
        nodes: list[ast.AST] = [tree]
        i = 0
        while i < len(nodes):
            node = nodes[i]
            for child in ast.iter_child_nodes(node):
                self.parent[id(child)] = node
                nodes.append(child)
            i += 1
        for node in nodes:
            if isinstance(node, ast.Assign) and len(node.targets) == 1:
                t = node.targets[0]
                name = (
                    t.id
                    if isinstance(t, ast.Name)
                    else t.attr
                    if isinstance(t, ast.Attribute)
                    else None
                )
                v = _num(node.value, Consts(data=self.consts.data))
                if name and v is not None:
                    self.consts[name] = v
                    if isinstance(node.value, ast.Subscript):  # TOL = GOLDEN["tol"]
                        self.named_sources[name] = self.tol_source(node.value)
        handled: set[int] = set()
        for node in nodes:
            if isinstance(node, ast.Dict):
                self.dict_thresholds(node, handled)
        for node in nodes:
            if isinstance(node, ast.Call) and id(node) not in handled:
                self.call(node)
            elif isinstance(node, ast.Assert):
                self.compare(node.test, node)
            elif isinstance(node, ast.If) and any(
                isinstance(s, ast.Raise)
                or (
                    isinstance(s, ast.Expr)
                    and isinstance(s.value, ast.Call)
                    and _name(s.value.func).endswith(("fail", "exit"))
                )
                for s in node.body
            ):
                self.compare(node.test, node, negate=True)
            elif isinstance(node, ast.Assign):
                self.assign(node)

    def dict_thresholds(self, node: ast.Dict, handled: set[int]) -> None:
        """Megatron-LM style ``{"lm loss": [DeterministicTest(), ApproximateTest(rtol=0.05)]}``."""
        for k, v in zip(node.keys, node.values):
            if not (isinstance(k, ast.Constant) and isinstance(k.value, str)):
                continue
            calls = v.elts if isinstance(v, (ast.List, ast.Tuple)) else [v]
            for c in calls:
                if not isinstance(c, ast.Call):
                    continue
                n = _name(c.func).rsplit(".", 1)[-1]
                if n == "DeterministicTest":
                    handled.add(id(c))
                    self.add(
                        c,
                        "deterministic",
                        metric=k.value,
                        rtol=0.0,
                        atol=0.0,
                        style="megatron",
                        formula="np.isclose(actual, golden, rtol=0, atol=0) at every step (exact match)",
                    )
                elif n == "ApproximateTest":
                    handled.add(id(c))
                    rtol = _num(_kw(c, "rtol"), self.consts)
                    atol = _num(_kw(c, "atol"), self.consts)
                    af = _kw(c, "atol_func")
                    note = ""
                    if isinstance(af, ast.Call):
                        handled.add(id(af))
                        inner = _num(_kw(af, "rtol"), self.consts)
                        if inner is not None:
                            rtol, atol, note = (
                                inner,
                                0.0,
                                " (atol_func=approximate_threshold: read as rtol)",
                            )
                    self.add(
                        c,
                        "approximate",
                        metric=k.value,
                        rtol=1e-5 if rtol is None else rtol,
                        atol=0.0 if atol is None else atol,
                        style="megatron",
                        formula="np.isclose(actual, golden, rtol, atol) per step; passes when at most "
                        "min(max(n // 100, 1), 50) of n steps fail (Megatron-LM pipeline); "
                        "iteration-time: medians over steps 30-45 (5-20 for <= 25 steps)" + note,
                    )

    def call(self, c: ast.Call) -> None:
        full = _name(c.func)
        n = full.rsplit(".", 1)[-1]
        a0 = c.args[0] if c.args else None
        if n == "approx":
            self._approx(c, a0)
        elif n in ("assert_allclose", "assert_close"):
            self._allclose(c, full, n)
        elif n in ("isclose", "allclose") and full.split(".")[0] in (
            "math",
            "np",
            "numpy",
            "torch",
            "cmath",
        ):
            self._isclose(c, full)
        elif n in ("assert_array_almost_equal", "assert_almost_equal"):
            self._almost_equal(c, full)
        elif n in (
            "assert_array_equal",
            "assert_equal",
            "assertEqual",
            "assert_frame_equal",
            "assert_series_equal",
        ) and _METRIC_WORDS.search(_seg(self.text, c)):
            self._exact(c, full)
        elif n in ("DeterministicTest", "ApproximateTest"):
            pass  # outside a metric dict there is no metric to attach it to
        elif full.endswith("mark.timeout") and a0 is not None and _num(a0, self.consts) is not None:
            self._timeout_mark(c, a0)
        else:
            self._other(c, full, n)

    def _approx(self, c: ast.Call, a0: ast.expr | None) -> None:
        """``pytest.approx``: rel/abs (pytest's defaults when omitted), the element compared."""
        rel_n = _kw(c, "rel") or (c.args[1] if len(c.args) > 1 else None)
        abs_n = _kw(c, "abs") or (c.args[2] if len(c.args) > 2 else None)
        rel = _num(rel_n, self.consts)
        ab = _num(abs_n, self.consts)
        unresolved = (rel_n is not None and rel is None) or (abs_n is not None and ab is None)
        if unresolved:
            self.add(
                c,
                "tolerance",
                metric=metric_of(self.parent.get(id(c)) or c),
                formula="pytest.approx with a tolerance that is not a literal nor read "
                "from a file the test loads: not recomputed",
            )
            return
        # pytest's defaults: rel 1e-6 and abs 1e-12 when neither is given; when only rel is
        # given abs stays 1e-12; when only abs is given rel is not used (pytest docs, approx)
        if rel is None and ab is None:
            rel, ab = 1e-6, 1e-12
        elif ab is None:
            ab = 1e-12
        parent = self.parent.get(id(c))
        index = None
        if isinstance(parent, ast.Compare):
            idx = {const_index(parent.left), const_index(c.args[0]) if c.args else None}
            idx.discard(None)
            index = idx.pop() if len(idx) == 1 else None
        metric = metric_of(parent) if isinstance(parent, ast.Compare) else None
        metric = metric or (metric_of(a0) if a0 is not None else None)
        formula = (
            "|actual - expected| <= max(rel * |expected|, abs)"
            if rel is not None
            else "|actual - expected| <= abs"
        )
        self.add(
            parent if isinstance(parent, ast.Compare) else c,
            "approx",
            metric=metric,
            rtol=rel,
            atol=ab,
            index=index,
            tolerance_source=self.tol_source(rel_n, abs_n),
            formula=f"pytest.approx: {formula}",
        )

    def _allclose(self, c: ast.Call, full: str, n: str) -> None:
        """``numpy.testing.assert_allclose`` / ``torch.testing.assert_close`` (defaults by dtype)."""
        torchy = full.startswith("torch") or n == "assert_close"
        rtol_n = _kw(c, "rtol") or (c.args[2] if len(c.args) > 2 else None)
        atol_n = _kw(c, "atol") or (c.args[3] if len(c.args) > 3 else None)
        rtol, atol = _num(rtol_n, self.consts), _num(atol_n, self.consts)
        if (rtol_n is not None and rtol is None) or (atol_n is not None and atol is None):
            self.add(
                c,
                "tolerance",
                metric=metric_of(c),
                formula=f"{full} with a tolerance that is not a literal nor read from a "
                "file the test loads: not recomputed",
            )
            return
        dtype = _torch_dtype(c) if torchy else None
        if torchy:
            # torch.testing.assert_close defaults by dtype (its documentation's table)
            d_rtol, d_atol = _TORCH_TOL.get(dtype or "float32", (1.3e-6, 1e-5))
        else:  # numpy.testing.assert_allclose: rtol 1e-7, atol 0
            d_rtol, d_atol = 1e-7, 0.0
        rtol = rtol if rtol is not None else d_rtol
        atol = atol if atol is not None else d_atol
        idx = {const_index(a) for a in c.args[:2]}
        idx.discard(None)
        self.add(
            c,
            "allclose",
            metric=metric_of(c),
            rtol=rtol,
            atol=atol,
            dtype=dtype,
            index=idx.pop() if len(idx) == 1 else None,
            tolerance_source=self.tol_source(rtol_n, atol_n),
            formula=f"{full}: |actual - desired| <= atol + rtol * |desired| for every element"
            + (f" (in {dtype})" if dtype else ""),
        )

    def _isclose(self, c: ast.Call, full: str) -> None:
        """``math.isclose`` / ``numpy.isclose`` / ``allclose`` and their defaults."""
        if full.startswith(("math", "cmath")):
            rtol = _num(_kw(c, "rel_tol"), self.consts)
            atol = _num(_kw(c, "abs_tol"), self.consts)
            self.add(
                c,
                "isclose",
                metric=metric_of(c),
                rtol=1e-9 if rtol is None else rtol,
                atol=0.0 if atol is None else atol,
                formula="math.isclose: |a - b| <= max(rel_tol * max(|a|, |b|), abs_tol)",
            )
        else:
            rtol = _num(_kw(c, "rtol") or (c.args[2] if len(c.args) > 2 else None), self.consts)
            atol = _num(_kw(c, "atol") or (c.args[3] if len(c.args) > 3 else None), self.consts)
            self.add(
                c,
                "isclose",
                metric=metric_of(c),
                rtol=1e-5 if rtol is None else rtol,
                atol=1e-8 if atol is None else atol,
                formula=f"{full}: |a - b| <= atol + rtol * |b|",
            )

    def _almost_equal(self, c: ast.Call, full: str) -> None:
        """``assert_array_almost_equal(decimal=d)``: atol 1.5 * 10**-d."""
        dec = _num(_kw(c, "decimal") or (c.args[2] if len(c.args) > 2 else None), self.consts)
        dec = 6.0 if dec is None else dec
        self.add(
            c,
            "isclose",
            metric=metric_of(c),
            rtol=0.0,
            atol=1.5 * 10**-dec,
            formula=f"{full}: |actual - desired| < 1.5 * 10**-{dec:g}",
        )

    def _exact(self, c: ast.Call, full: str) -> None:
        """An exact-equality assertion on a metric."""
        self.add(
            c,
            "exact",
            metric=metric_of(c),
            rtol=0.0,
            atol=0.0,
            formula=f"{full}: exact equality",
        )

    def _timeout_mark(self, c: ast.Call, a0: ast.expr) -> None:
        """``@pytest.mark.timeout(n)``."""
        self.add(
            c,
            "timeout",
            threshold=_num(a0, self.consts),
            op="<=",
            formula="pytest-timeout: the test is killed after this many seconds",
        )

    def _other(self, c: ast.Call, full: str, n: str) -> None:
        """Any other call: a ``timeout=`` argument, or rtol/atol passed to a repo-specific comparison."""
        t = _kw(c, "timeout")
        if t is not None and _num(t, self.consts) is not None:
            self.add(
                c,
                "timeout",
                threshold=_num(t, self.consts),
                op="<=",
                formula=f"{full or 'call'}(timeout=...): raises after this many seconds",
            )
        rt, at = _kw(c, "rtol", "rel_tol", "rel"), _kw(c, "atol", "abs_tol", "abs")
        if (rt is not None or at is not None) and n not in ("approx",):
            self.add(
                c,
                "tolerance",
                metric=metric_of(c),
                rtol=_num(rt, self.consts),
                atol=_num(at, self.consts),
                formula=f"{full}(rtol/atol): tolerance passed to a repo-specific comparison",
            )

    def compare(self, test: ast.AST, stmt: ast.AST, negate: bool = False) -> None:
        """A gate of one comparison ``measured OP bound`` (``negate``: the comparison of an
        ``if ...: raise``, so the gate requires its opposite): exact equality of a metric
        (:meth:`_compare_exact`), a tolerance on ``|a - b|`` (:meth:`_compare_tolerance`), or a timing,
        throughput or metric threshold (:meth:`_compare_threshold`). ``approx`` comparisons are not
        gates of this kind."""
        if not isinstance(test, ast.Compare) or len(test.ops) != 1:
            return
        if any(
            isinstance(s, ast.Call) and _name(s.func).endswith("approx") for s in ast.walk(test)
        ):
            return
        left, right, op = test.left, test.comparators[0], test.ops[0]
        sym = _COMPARE_OPS.get(type(op))
        if sym is None:
            return
        lv, rv = _num(left, self.consts), _num(right, self.consts)
        measured, bound, flip = (left, rv, False) if rv is not None else (right, lv, True)
        if sym in ("==", "!="):
            if sym == "==" and not negate and (_METRIC_WORDS.search(_seg(self.text, test))):
                self._compare_exact(test)
            return
        if flip:
            sym = _FLIPPED[sym]
        if negate:  # `if x > bound: raise` -> the gate requires x <= bound
            sym = _NEGATED[sym]
        if _is_abs_diff(measured):
            self._compare_tolerance(test, measured, bound, sym, left if flip else right)
        elif bound is not None:
            self._compare_threshold(test, measured, bound, sym)

    def _compare_exact(self, test: ast.Compare) -> None:
        """``assert a == b`` on a metric: an exact-equality gate."""
        self.add(
            test,
            "exact",
            metric=metric_of(test),
            rtol=0.0,
            atol=0.0,
            op="==",
            formula="assert a == b: exact equality",
        )

    def _compare_tolerance(
        self, test: ast.Compare, measured: ast.AST, bound: float | None, sym: str, bnode: ast.AST
    ) -> None:
        """``|a - b| OP tol`` (relative when divided): a tolerance gate, its tolerance and where
        the tolerance is set; a tolerance that is not a literal is recorded without its value."""
        if bound is None:
            self.add(
                test,
                "tolerance",
                metric=metric_of(measured),
                op=sym,
                formula="|a - b| compared with a tolerance that is not a literal",
            )
            return
        rel = any(
            isinstance(s, ast.BinOp) and isinstance(s.op, ast.Div) for s in ast.walk(measured)
        )
        self.add(
            test,
            "tolerance",
            metric=metric_of(measured),
            rtol=bound if rel else None,
            atol=None if rel else bound,
            op=sym,
            tolerance_source=self.tol_source(bnode)
            or (self.named_sources.get(bnode.id, "") if isinstance(bnode, ast.Name) else ""),
            formula=("|a - b| / |b|" if rel else "|a - b|") + f" {sym} {bound:g}",
        )

    def _compare_threshold(
        self, test: ast.Compare, measured: ast.AST, bound: float, sym: str
    ) -> None:
        """``measured OP bound`` on a throughput, a time or a metric (by the words of the measured
        expression): a threshold gate of that kind; nothing for other quantities."""
        src = _seg(self.text, measured)
        kind = (
            "throughput"
            if _SPEED_WORDS.search(src)
            else "timing"
            if _TIME_WORDS.search(src)
            else "threshold"
            if _METRIC_WORDS.search(src)
            else None
        )
        if kind:
            self.add(
                test,
                kind,
                metric=metric_of(measured) or src,
                threshold=bound,
                op=sym,
                formula=f"measured {sym} {bound:g}",
            )

    def assign(self, node: ast.Assign) -> None:
        t = node.targets[0] if len(node.targets) == 1 else None
        name = t.id if isinstance(t, ast.Name) else t.attr if isinstance(t, ast.Attribute) else None
        if not name:
            return
        if _CHECKED.match(name) and isinstance(node.value, (ast.List, ast.Tuple)):
            vals = [
                e.value
                for e in node.value.elts
                if isinstance(e, ast.Constant) and isinstance(e.value, str)
            ]
            if vals:
                self.checked = vals
                self.checked_line = Line(
                    self.rel, node.lineno, _seg(self.text, node), [], "checked_metrics"
                )
            return
        v = _num(node.value, Consts())
        if v is not None and _TOL_NAME.search(name) and self.func_of(node) is None:
            base = (
                re.sub(
                    r"_?(rtol|atol|tol|tolerance|margin|threshold)_?", "", name, flags=re.IGNORECASE
                )
                or None
            )
            rel = bool(re.search(r"rtol|rel|pct|percent", name, re.IGNORECASE))
            self.add(
                node,
                "tolerance",
                metric=base,
                rtol=v if rel else None,
                atol=None if rel else v,
                formula=f"{name} = {v:g} (a tolerance setting; where it is applied is not traced)",
            )


#: torch.testing.assert_close default (rtol, atol) per dtype (PyTorch documentation)
_TORCH_TOL = {
    "float16": (1e-3, 1e-5),
    "bfloat16": (1.6e-2, 1e-5),
    "float32": (1.3e-6, 1e-5),
    "float64": (1e-7, 1e-7),
}


def _torch_dtype(c: ast.Call) -> str:
    """The dtype an ``assert_close`` compares in: an explicit ``dtype=torch.X`` / ``.double()`` /
    ``.to(torch.X)`` in its arguments, else float32 (``torch.tensor`` of Python floats)."""
    for a in c.args[:2]:
        for sub in ast.walk(a):
            if isinstance(sub, ast.Attribute) and sub.attr in (
                "float64",
                "double",
                "float16",
                "half",
                "bfloat16",
                "float32",
                "float",
            ):
                return {"double": "float64", "half": "float16", "float": "float32"}.get(
                    sub.attr, sub.attr
                )
    return "float32"


def parse_python(text: str) -> ast.Module | None:
    """Parse source text; retry without elision lines (``...``) for excerpts. ``None`` if still invalid."""
    try:
        return ast.parse(text)
    except (SyntaxError, ValueError, RecursionError, MemoryError):  # pathological sources: skip
        pass
    kept = "\n".join("" if ln.strip() in ("...", "…") else ln for ln in text.split("\n"))
    try:
        return ast.parse(kept)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return None


def scan_python(
    text: str, rel: str, data: dict | None = None, sources: dict | None = None
) -> tuple[list[Gate], list[str] | None, Line | None, list[str]]:
    """Gates in one Python source. Returns (gates, checked metric list, where it was declared, notes).

    ``data`` maps module names bound to loaded JSON documents (from :mod:`.trace`) so that
    tolerances read from them (``rel=GOLDEN["rtol"]``) resolve; ``sources`` names their files.
    """
    notes: list[str] = []
    if not _GATE_TOKENS.search(text):
        return [], None, None, notes
    tree = parse_python(text)
    sc = _Scanner(text, rel, data, sources)
    if tree is None:
        notes.append(f"{rel}: not valid Python; its comparisons were not read")
    else:
        sc.run(tree)
    checked, where = sc.checked, sc.checked_line
    for i, ln in enumerate(text.split("\n"), 1):
        m = _CHECKED_COMMENT.search(ln) if ln.lstrip().startswith("#") else None
        if m and checked is None:
            try:
                vals = ast.literal_eval(m.group(1) or m.group(2))
            except (ValueError, SyntaxError):
                continue
            if isinstance(vals, list) and all(isinstance(v, str) for v in vals):
                checked, where = vals, Line(rel, i, ln.strip(), [], "checked_metrics")
    sc.gates.sort(key=lambda g: (g.line, g.kind))
    return sc.gates, checked, where, notes


def _seconds(v: str, default_unit: str = "s") -> float | None:
    """``"90"``, ``"1h 30m"``, ``"3 hours 30 minutes"``, ``"45s"`` -> seconds; ``None`` if not a duration."""
    unit = r"(h|hrs?|hours?|m|mins?|minutes?|s|secs?|seconds?)"
    if not re.fullmatch(rf"\s*(\d+(\.\d+)?\s*{unit}?\s*)+", v, re.IGNORECASE):
        return None
    parts = re.findall(rf"(\d+(?:\.\d+)?)\s*{unit}?", v, re.IGNORECASE)
    total = 0.0
    for num, unit in parts:
        u = (unit or default_unit).lower()
        total += float(num) * (3600 if u.startswith("h") else 60 if u.startswith("m") else 1)
    return total


def scan_ci_yaml(text: str, rel: str) -> list[Gate]:
    """Job timeouts in CI YAML (GitHub ``timeout-minutes``, GitLab ``timeout: 1h``), in seconds."""
    out = []
    for i, ln in enumerate(text.split("\n"), 1):
        m = _CI_TIMEOUT.match(ln)
        if not m:
            continue
        key = m.group(1).lower()
        val = m.group(2).split("#")[0].strip().strip("'\"")
        secs = _seconds(val, "m" if key in ("timeout-minutes", "timeout_in_minutes") else "s")
        if secs is not None:
            out.append(
                Gate(
                    rel,
                    i,
                    ln.strip(),
                    "timeout",
                    threshold=secs,
                    op="<=",
                    formula=f"CI job {key}: the job is cancelled after {secs:g} s",
                )
            )
    return out


def parse_pins(text: str) -> dict[str, str]:
    """``name==version`` pins of a requirements/constraints file."""
    out = {}
    for ln in text.split("\n"):
        m = re.match(r"^\s*([A-Za-z0-9][A-Za-z0-9_.\-]*)(?:\[[^\]]*\])?\s*==\s*([\w.+\-!]+)", ln)
        if m:
            out[m.group(1)] = m.group(2)
    return out
