"""Follow a failing test to its numbers: the values it compares, recomputed, and a decision.

Where :mod:`.trace` finds the files a test reads and hands them to the metric pipeline, this
module follows one failing test function as a careful analyst reads it, statically with
:mod:`ast` (the user's code is never imported or executed), and evaluates the two sides of
each comparison it makes:

* **bindings**: module and class constants (literals), ``@pytest.mark.parametrize`` values
  bound by the node id's parameter part (``test_loss[llama2/7B-llama2-meta]``; pytest's id of a
  non-literal value such as ``torch.bfloat16`` is ``dtype0``), pytest fixtures (same module,
  then ``conftest.py`` files up to the repository root; a fixture chain is followed at most
  :data:`MAX_DEPTH` deep, so a loop ends), ``self.helper(args)`` methods of the test class
  returning a value (followed the same way), and the test's own assignments in order;
* **values**: literals, f-strings, ``str.replace``/``format``, ``Path`` arithmetic,
  ``json.load(open(P))`` (also ``with open(P) as f``), ``yaml.safe_load`` (the project's
  safe loader with its limits), ``np.load`` (``allow_pickle=False``), ``pd.read_csv`` / the
  csv module, subscripts, slices, ``list(d.values())``, ``np.array`` / ``torch.tensor``
  (values as nested lists);
* **comparisons**: ``torch.testing.assert_close``, ``np.testing.assert_allclose``,
  ``np.allclose`` / ``np.isclose``, ``== pytest.approx(rel, abs)``, ``assertAlmostEqual(places)``,
  ``abs(a - b) < tol`` and ``==``, also inside a ``for`` loop over a literal dict or list (one
  comparison per iteration, e.g. Megatron-LM's per-metric checks).

Files are read only inside the repository or when given on the command line (by base name):
absolute paths and ``..`` that leave it are refused with one note, files over
:data:`~.golden.MAX_VALUE_BYTES` are skipped. Each comparison is recomputed element by element
(:func:`recompute`) and :func:`decide` turns the checks into an outcome and a cause, naming the
rule that decided.
"""

from __future__ import annotations

import ast
import math
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from .trace import confine, node_location

MAX_DEPTH = 32  # nesting of expressions, fixtures and helpers followed; deeper (a loop) stops
MAX_LOOP = 64  # iterations of a `for` over a literal unrolled
MAX_ELEMENTS = 5_000_000  # values compared per check
MAX_SCALAR_LOOP = 100_000  # passes of a loop comparing one value per pass (zip(actual, expected))
MAX_SOURCE_BYTES = 2 * 1024 * 1024  # a test module larger than this is not parsed (as gates.py)


class _NoValue(Exception):
    """An expression that cannot be evaluated statically."""


@dataclass
class Check:
    """One comparison the test makes, recomputed element by element.

    ``allowed`` per element is the comparison's own bound: ``atol + rtol*|expected|``
    (numpy/torch), ``max(rel*|expected|, abs)`` (pytest.approx), ``1.5*10**-places``
    (``assertAlmostEqual``), the test's ``tol`` (``abs(a - b) < tol``), 0 for ``==``.
    """

    kind: str
    line: int
    label: str  # a metric name when the test names one (err_msg, loop key), else ""
    rtol: float
    atol: float
    golden_shape: tuple[int, ...] = ()
    actual_shape: tuple[int, ...] = ()
    n: int = 0
    n_out: int = 0
    max_abs: float = 0.0
    max_rel: float = 0.0
    max_excess: float = 0.0  # worst |diff| / allowed
    above: int = 0
    below: int = 0
    first_out: int | None = None  # 1-based element index
    growing: bool = False
    first_off: bool = False  # element 1 outside
    golden_src: str = ""
    actual_src: str = ""
    actual: list = field(default_factory=list, repr=False)  # the actual values, flattened
    golden: list = field(default_factory=list, repr=False)  # the golden values, flattened

    @property
    def failed(self) -> bool:
        return self.golden_shape != self.actual_shape or self.n_out > 0

    @property
    def shape_mismatch(self) -> bool:
        return self.golden_shape != self.actual_shape


@dataclass
class Followed:
    """A failing test followed into its source: the checks recomputed, what is missing."""

    test: str
    path: str
    func_line: int
    checks: list[Check] = field(default_factory=list)
    missing: list[str] = field(default_factory=list)  # files it reads that were not found
    notes: list[str] = field(default_factory=list)
    bf16: bool = False  # the test runs in bfloat16 (a parameter or name says so)


_TIME_WORDS = re.compile(
    r"iteration[-_ ]?time|step[-_ ]?time|elapsed|latency|throughput|tokens?[/_ ]?(?:per[_ ])?s|"
    r"samples?[/_ ]?(?:per[_ ])?s|tflops|it/s|wall",
    re.IGNORECASE,
)
_GOLDEN_NAME = re.compile(r"golden|expected|reference|(^|_)ref|baseline|_RES$|EXPECT", re.I)


def _dotted(n: ast.AST) -> str:
    if isinstance(n, ast.Name):
        return n.id
    if isinstance(n, ast.Attribute):
        d = _dotted(n.value)
        return f"{d}.{n.attr}" if d else ""
    return ""


class _Scope:
    """What a test can see: the repo, files given, module/class bindings, fixtures."""

    def __init__(self, repo: Path, given: dict[str, Path], notes: list[str], missing: list[str]):
        self.repo = repo
        self.given = given
        self.notes = notes
        self.missing = missing
        self.methods: dict[str, ast.FunctionDef] = {}
        self.fixtures: dict[str, tuple[ast.FunctionDef, dict]] = {}
        self.sources: dict[int, str] = {}  # id(value) -> file it came from

    # files -------------------------------------------------------------
    def read(self, path: str, how: str):
        from ..errors import InputError
        from .golden import MAX_VALUE_BYTES, TooBig, TooDeep, read_json_capped

        base = Path(path).name
        if base in self.given:
            p = self.given[base]
            disp = str(p)
        else:
            q, why = confine(self.repo, path)
            if q is None:
                self.notes.append(f"{path}: {why}; not opened")
                raise _NoValue(path)
            if not q.is_file():
                if path not in self.missing:
                    self.missing.append(path)
                raise _NoValue(path)
            p = q
            disp = str(q.relative_to(self.repo.resolve())).replace("\\", "/")
        try:
            size = p.stat().st_size
            if size > MAX_VALUE_BYTES:
                self.notes.append(f"{disp}: skipped: too big ({size / 2**20:.0f} MiB)")
                raise _NoValue(path)
            if how == "json":
                val = read_json_capped(p, disp)
            elif how == "yaml":
                from ..safeparse import load_yaml

                val = load_yaml(p.read_text(encoding="utf-8", errors="replace"))
            elif how == "npy":
                arr = np.load(p, allow_pickle=False)
                if isinstance(arr, np.lib.npyio.NpzFile):
                    val = {k: arr[k].tolist() for k in arr.files}
                else:
                    val = arr.tolist()
            elif how == "csv":
                val = _read_csv_columns(p)
            else:
                val = p.read_text(encoding="utf-8", errors="replace")
        except (TooBig, TooDeep, InputError, ValueError, OSError) as exc:
            self.notes.append(f"{disp}: {exc}")
            raise _NoValue(path) from exc
        self.sources[id(val)] = disp
        return val


_PYTEST_PARAM_ID = (str, int, float, bool, type(None))


def _param_bindings(fn: ast.FunctionDef, param_id: str, env: dict, scope: _Scope) -> dict:
    """Bind ``@pytest.mark.parametrize`` names to the values whose pytest id is ``param_id``.

    pytest joins the ids of stacked decorators with ``-`` (innermost decorator first); a
    literal's id is ``str(value)``, anything else ``argname + index``.
    """
    decos = []
    for d in fn.decorator_list:
        if isinstance(d, ast.Call) and _dotted(d.func).endswith("parametrize") and len(d.args) >= 2:
            decos.append(d)
    if not decos:
        return {}
    options: list[list[tuple[str, dict]]] = []
    for d in reversed(decos):  # pytest: closest to the function first
        names_node = d.args[0]
        try:
            names_v = ast.literal_eval(names_node)
        except ValueError:
            return {}
        names = (
            [n.strip() for n in names_v.split(",")] if isinstance(names_v, str) else list(names_v)
        )
        rows = d.args[1].elts if isinstance(d.args[1], (ast.List, ast.Tuple)) else []
        opts: list[tuple[str, dict]] = []
        for row in rows:
            if isinstance(row, ast.Call) and _dotted(row.func).endswith("param"):
                row = ast.Tuple(elts=list(row.args), ctx=ast.Load())
            elts = row.elts if len(names) > 1 and isinstance(row, (ast.Tuple, ast.List)) else [row]
            ids, bound = [], {}
            for i, (nm, e) in enumerate(zip(names, elts)):
                try:
                    v = _ev(e, env, scope, 0)
                except _NoValue:
                    v = _dotted(e) or None
                    bound[nm] = v
                    ids.append(f"{nm}{len(opts)}")
                    continue
                bound[nm] = v
                ids.append(
                    str(v)
                    if isinstance(v, _PYTEST_PARAM_ID) and not isinstance(e, ast.Attribute)
                    else f"{nm}{len(opts)}"
                )
                del i
            opts.append(("-".join(ids), bound))
        options.append(opts)
    # match the id greedily, decorator by decorator
    out: dict = {}

    def match(i: int, rest: str) -> bool:
        if i == len(options):
            return rest == ""
        for pid, b in options[i]:
            if rest == pid or rest.startswith(pid + "-"):
                if match(i + 1, rest[len(pid) + 1 :] if rest != pid else ""):
                    out.update(b)
                    return True
        return False

    match(0, param_id)
    return out


def _ev(node: ast.AST, env: dict, scope: _Scope, depth: int):
    """Evaluate ``node`` statically; raise :class:`_NoValue` when it cannot be.

    One evaluator per node type (:data:`_EVALUATORS`); any other node has no static value."""
    if depth > MAX_DEPTH:
        raise _NoValue("too deep")
    evaluate = _EVALUATORS.get(type(node))
    if evaluate is None:
        raise _NoValue(type(node).__name__)
    return evaluate(node, env, scope, depth + 1)


def _ev_constant(node: ast.Constant, env: dict, scope: _Scope, d: int):
    """A literal is its value."""
    return node.value


def _ev_name(node: ast.Name, env: dict, scope: _Scope, d: int):
    """A name bound in ``env``, else a fixture of the test's scope."""
    if node.id in env:
        return env[node.id]
    if node.id in scope.fixtures:
        return _fixture(node.id, scope, d)
    raise _NoValue(node.id)


def _ev_joined(node: ast.JoinedStr, env: dict, scope: _Scope, d: int):
    """An f-string: its literal parts and the values of its fields, joined."""
    parts = []
    for v in node.values:
        if isinstance(v, ast.Constant):
            parts.append(str(v.value))
        elif isinstance(v, ast.FormattedValue):
            parts.append(str(_ev(v.value, env, scope, d)))
    return "".join(parts)


def _ev_container(node: ast.List | ast.Tuple | ast.Dict, env: dict, scope: _Scope, d: int):
    """A list, tuple (as a list) or dict of values; a container of values read from a file comes
    from that file."""
    if isinstance(node, ast.Dict):
        vals = [_ev(v, env, scope, d) for k, v in zip(node.keys, node.values) if k is not None]
        out: object = {
            _ev(k, env, scope, d): v for k, v in zip([k for k in node.keys if k is not None], vals)
        }
    else:
        vals = [_ev(e, env, scope, d) for e in node.elts]
        out = vals
    src = next((scope.sources[id(v)] for v in vals if id(v) in scope.sources), None)
    if src:
        scope.sources[id(out)] = src
    return out


def _ev_unary(node: ast.UnaryOp, env: dict, scope: _Scope, d: int):
    """A negated value; no other unary operator has a static value here."""
    if isinstance(node.op, ast.USub):
        return -_ev(node.operand, env, scope, d)
    raise _NoValue(type(node).__name__)


def _ev_binop(node: ast.BinOp, env: dict, scope: _Scope, d: int):
    """Arithmetic on two numbers (+, -, *, / by a non-zero), string concatenation, and ``a / b``
    with a string side as a path."""
    a, b = _ev(node.left, env, scope, d), _ev(node.right, env, scope, d)
    if isinstance(node.op, ast.Div) and (isinstance(a, str) or isinstance(b, str)):
        return f"{a}/{b}"
    if isinstance(a, (int, float)) and isinstance(b, (int, float)):
        ops = {ast.Add: a + b, ast.Sub: a - b, ast.Mult: a * b}
        if type(node.op) in ops:
            return ops[type(node.op)]
        if isinstance(node.op, ast.Div) and b:
            return a / b
    if isinstance(node.op, ast.Add) and isinstance(a, str) and isinstance(b, str):
        return a + b
    raise _NoValue("binop")


def _ev_bound(e: ast.Slice, env: dict, scope: _Scope, d: int) -> slice:
    """A slice's bounds evaluated (an absent bound is None)."""
    lo = _ev(e.lower, env, scope, d) if e.lower else None
    hi = _ev(e.upper, env, scope, d) if e.upper else None
    return slice(lo, hi)


def _ev_subscript(node: ast.Subscript, env: dict, scope: _Scope, d: int):
    """``x[a:b]`` of a list, ``x[i, j:k]`` of an array, ``x[key]``; an item of a value read from a
    file comes from that file."""
    base = _ev(node.value, env, scope, d)
    sl = node.slice
    if isinstance(sl, ast.Slice):
        bounds = _ev_bound(sl, env, scope, d)
        if isinstance(base, list):
            return base[bounds]
        raise _NoValue("slice")
    if isinstance(sl, ast.Tuple):
        arr = np.asarray(base, dtype=float)
        idx = [
            _ev_bound(e, env, scope, d) if isinstance(e, ast.Slice) else _ev(e, env, scope, d)
            for e in sl.elts
        ]
        return arr[tuple(idx)].tolist()
    key = _ev(sl, env, scope, d)
    try:
        out = base[key]
    except (KeyError, IndexError, TypeError) as exc:
        raise _NoValue("subscript") from exc
    if id(base) in scope.sources:
        scope.sources[id(out)] = scope.sources[id(base)]
    return out


def _ev_attribute(node: ast.Attribute, env: dict, scope: _Scope, d: int):
    """``self.X`` / ``cls.X`` of the test class, or a dtype name (``torch.float16``) as its name."""
    if isinstance(node.value, ast.Name) and node.value.id in ("self", "cls"):
        if node.attr in env.get("__class__", {}):
            return env["__class__"][node.attr]
    name = _dotted(node)
    if name.endswith(("bfloat16", "float16", "float32", "float64", "half")):
        return name
    raise _NoValue(name)


def _ev_call(node: ast.Call, env: dict, scope: _Scope, d: int):
    """A call: see :func:`_call`."""
    return _call(node, env, scope, d)


#: The static evaluator of each node type (:func:`_ev`).
_EVALUATORS: dict[type, Callable[..., Any]] = {
    ast.Constant: _ev_constant,
    ast.Name: _ev_name,
    ast.JoinedStr: _ev_joined,
    ast.List: _ev_container,
    ast.Tuple: _ev_container,
    ast.Dict: _ev_container,
    ast.UnaryOp: _ev_unary,
    ast.BinOp: _ev_binop,
    ast.Subscript: _ev_subscript,
    ast.Attribute: _ev_attribute,
    ast.Call: _ev_call,
}


_JSON_LOAD = {"json.load", "json.loads"}
_YAML_LOAD = {"yaml.safe_load", "yaml.load", "safe_load"}
_NP_LOAD = {"np.load", "numpy.load"}
_CSV_LOAD = {"pd.read_csv", "pandas.read_csv"}
_WRAP = {
    "np.array",
    "np.asarray",
    "numpy.array",
    "numpy.asarray",
    "torch.tensor",
    "torch.as_tensor",
    "torch.from_numpy",
    "torch.Tensor",
    "list",
    "np.float64",
    "float",
    "tuple",
}


def _open_target(node: ast.AST, env: dict, scope: _Scope, d: int):
    """``open(P)`` / ``Path(P).open()`` / ``P.open()`` -> the path string P."""
    if isinstance(node, ast.Call):
        fn = _dotted(node.func)
        if fn in ("open", "io.open") and node.args:
            return str(_ev(node.args[0], env, scope, d))
        if isinstance(node.func, ast.Attribute) and node.func.attr == "open":
            return str(_ev(node.func.value, env, scope, d))
    if isinstance(node, ast.Name) and isinstance(env.get(node.id), _OpenFile):
        return env[node.id].path
    raise _NoValue("open")


@dataclass
class _OpenFile:
    path: str


#: Calls that read a file: the callee names, the format, whether the first argument is an open
#: file (``json.load(open(P))``) rather than the path itself (``np.load(P)``).
_READERS = (
    (_JSON_LOAD, "json", True),
    (_YAML_LOAD, "yaml", True),
    (_NP_LOAD, "npy", False),
    (_CSV_LOAD, "csv", False),
)
_PATH_CALLS = ("Path", "pathlib.Path", "os.path.join")
#: Methods of a string and of a dict evaluated as Python does; tensor/array methods that leave
#: the values as they are.
_STR_METHODS = ("replace", "format", "strip", "lower", "upper")
_DICT_METHODS = ("values", "keys", "items", "get")
_IDENTITY_METHODS = ("cpu", "detach", "float", "numpy", "tolist", "to", "squeeze", "flatten")
#: What :func:`_call_method` returns for a method it does not evaluate.
_UNKNOWN_METHOD = object()


def _call(node: ast.Call, env: dict, scope: _Scope, d: int):
    """A call evaluated statically: a file read (:data:`_READERS`), ``zip`` / ``enumerate``, a
    path built with ``Path`` / ``os.path.join``, a value wrapper (:data:`_WRAP`), or a method
    (:func:`_call_method`); anything else has no static value."""
    fn = _dotted(node.func)
    if node.args:
        for names, kind, opened in _READERS:
            if fn in names:
                return _call_read(node.args[0], kind, opened, env, scope, d)
    if fn == "zip" and node.args:
        return _call_zip(node, env, scope, d)
    if fn == "enumerate" and node.args:
        return _call_enumerate(node, env, scope, d)
    if fn in _PATH_CALLS:
        return "/".join(str(_ev(a, env, scope, d)) for a in node.args) or "."
    if fn in _WRAP and node.args:
        return _call_wrap(fn, node, env, scope, d)
    if isinstance(node.func, ast.Attribute):
        out = _call_method(node, node.func, env, scope, d)
        if out is not _UNKNOWN_METHOD:
            return out
    raise _NoValue(fn or "call")


def _call_read(arg: ast.AST, kind: str, opened: bool, env: dict, scope: _Scope, d: int):
    """The content of the file a reader call names (through ``open`` when ``opened``)."""
    path = _open_target(arg, env, scope, d) if opened else str(_ev(arg, env, scope, d))
    return scope.read(path, kind)


def _call_zip(node: ast.Call, env: dict, scope: _Scope, d: int):
    """``zip`` of sequences, as lists, at most :data:`MAX_ELEMENTS`."""
    seqs = [_ev(a, env, scope, d) for a in node.args]
    if all(isinstance(x, (list, tuple)) for x in seqs):
        return [list(t) for t in zip(*seqs)][:MAX_ELEMENTS]
    raise _NoValue("zip")


def _call_enumerate(node: ast.Call, env: dict, scope: _Scope, d: int):
    """``enumerate`` of a sequence, as [index, item] lists."""
    seq = _ev(node.args[0], env, scope, d)
    if isinstance(seq, (list, tuple)):
        return [[i, x] for i, x in enumerate(seq)]
    raise _NoValue("enumerate")


def _call_wrap(fn: str, node: ast.Call, env: dict, scope: _Scope, d: int):
    """A wrapper's argument as plain values (``float`` converts); it keeps the file it came from."""
    v = _ev(node.args[0], env, scope, d)
    src = scope.sources.get(id(v))
    out = v.tolist() if hasattr(v, "tolist") else (list(v) if isinstance(v, tuple) else v)
    if fn == "float":
        out = float(v)
    if src:
        scope.sources[id(out)] = src
    return out


def _call_method(node: ast.Call, func: ast.Attribute, env: dict, scope: _Scope, d: int):
    """A method call: the test class's own method, a string or dict method, a tensor method that
    keeps the values; :data:`_UNKNOWN_METHOD` for any other."""
    attr = func.attr
    if isinstance(func.value, ast.Name) and func.value.id in ("self", "cls"):
        if attr in scope.methods:
            return _method(scope.methods[attr], node, env, scope, d)
        raise _NoValue(attr)
    base = _ev(func.value, env, scope, d)
    args = [_ev(a, env, scope, d) for a in node.args]
    if isinstance(base, str) and attr in _STR_METHODS:
        return getattr(base, attr)(*args)
    if isinstance(base, dict) and attr in _DICT_METHODS:
        out = list(getattr(base, attr)(*args)) if attr != "get" else base.get(*args)
        if id(base) in scope.sources:
            scope.sources[id(out)] = scope.sources[id(base)]
        return out
    if attr in _IDENTITY_METHODS:
        return base
    return _UNKNOWN_METHOD


def _run_body(body: list[ast.stmt], env: dict, scope: _Scope, d: int):
    """Execute assignments and ``with open(...) as f`` statically; return a ``return`` value."""
    for st in body:
        if isinstance(st, ast.Assign) and len(st.targets) == 1:
            t = st.targets[0]
            try:
                v = _ev(st.value, env, scope, d)
            except _NoValue:
                continue
            if isinstance(t, ast.Name):
                env[t.id] = v
            elif (
                isinstance(t, ast.Tuple) and isinstance(v, (list, tuple)) and len(v) == len(t.elts)
            ):
                for e, x in zip(t.elts, v):
                    if isinstance(e, ast.Name):
                        env[e.id] = x
        elif isinstance(st, ast.AnnAssign) and isinstance(st.target, ast.Name) and st.value:
            try:
                env[st.target.id] = _ev(st.value, env, scope, d)
            except _NoValue:
                pass
        elif isinstance(st, ast.With):
            for it in st.items:
                if isinstance(it.optional_vars, ast.Name):
                    try:
                        env[it.optional_vars.id] = _OpenFile(
                            _open_target(it.context_expr, env, scope, d)
                        )
                    except _NoValue:
                        pass
            r = _run_body(st.body, env, scope, d)
            if r is not _NONE:
                return r
        elif isinstance(st, ast.Return) and st.value is not None:
            return _ev(st.value, env, scope, d)
    return _NONE


_NONE = object()


def _method(fn: ast.FunctionDef, call: ast.Call, env: dict, scope: _Scope, d: int):
    args = [a.arg for a in fn.args.args if a.arg not in ("self", "cls")]
    local = {"__class__": env.get("__class__", {})}
    for name, a in zip(args, call.args):
        local[name] = _ev(a, env, scope, d)
    r = _run_body(fn.body, local, scope, d)
    if r is _NONE:
        raise _NoValue(fn.name)
    return r


def _fixture(name: str, scope: _Scope, d: int):
    fn, menv = scope.fixtures[name]
    local = dict(menv)
    for a in fn.args.args:
        if a.arg in scope.fixtures and a.arg != name:
            try:
                local[a.arg] = _fixture(a.arg, scope, d + 1)
            except _NoValue:
                pass
    r = _run_body(fn.body, local, scope, d + 1)
    if r is _NONE:
        raise _NoValue(name)
    return r


def _module_env(tree: ast.Module, scope: _Scope) -> dict:
    env: dict = {}
    for st in tree.body:
        if isinstance(st, (ast.Assign, ast.AnnAssign)):
            _run_body([st], env, scope, 0)
    return env


def _is_fixture(fn: ast.FunctionDef) -> bool:
    return any(
        _dotted(dd.func if isinstance(dd, ast.Call) else dd).endswith("fixture")
        for dd in fn.decorator_list
    )


def _parse(path: Path) -> ast.Module | None:
    try:
        if path.stat().st_size > MAX_SOURCE_BYTES:
            return None
        return ast.parse(path.read_text(encoding="utf-8", errors="replace"))
    except (SyntaxError, ValueError, OSError, RecursionError):
        return None


# comparisons --------------------------------------------------------------------------


@dataclass
class _Cmp:
    kind: str
    actual: ast.AST
    golden: ast.AST
    rtol: float
    atol: float
    line: int
    label: ast.AST | None = None


def _kw(call: ast.Call, names: tuple[str, ...], env, scope, default):
    for k in call.keywords:
        if k.arg in names:
            try:
                return float(_ev(k.value, env, scope, 0))
            except (_NoValue, TypeError, ValueError):
                return default
    return default


def _comparisons(stmt: ast.stmt, env: dict, scope: _Scope) -> list[_Cmp]:
    """Every comparison in ``stmt``: a tolerance-comparison call (:func:`_call_comparison`),
    ``x == approx(y)`` or ``abs(a - b) < tol`` (:func:`_compare_comparison`)."""
    out: list[_Cmp] = []
    for n in ast.walk(stmt):
        if isinstance(n, ast.Call):
            cmp = _call_comparison(n, env, scope)
        elif isinstance(n, ast.Compare) and len(n.ops) == 1:
            cmp = _compare_comparison(n, env, scope)
        else:
            continue
        if cmp is not None:
            out.append(cmp)
    return out


#: Tolerance-comparison calls by the last part of their name: (kind, default rtol, default atol),
#: the libraries' own defaults (torch.testing.assert_close for float32, numpy.testing.assert_allclose,
#: numpy/torch allclose and isclose).
_CLOSE_CALLS = {
    "assert_close": ("assert_close", 1.3e-6, 1e-5),
    "assert_allclose": ("assert_allclose", 1e-7, 0.0),
    "allclose": ("allclose", 1e-5, 1e-8),
    "isclose": ("allclose", 1e-5, 1e-8),
}


def _call_comparison(n: ast.Call, env: dict, scope: _Scope) -> _Cmp | None:
    """``assert_close`` / ``assert_allclose`` / numpy's or torch's ``allclose`` / ``isclose``
    with their tolerances (the library default when not given), or unittest's
    ``assertAlmostEqual`` (``places`` 7 or ``delta``); None for any other call."""
    if len(n.args) < 2:
        return None
    fn = _dotted(n.func)
    last = fn.rsplit(".", 1)[-1]
    if last in ("assertAlmostEqual", "assertAlmostEquals"):
        places = _kw(n, ("places",), env, scope, 7.0)
        delta = _kw(n, ("delta",), env, scope, float("nan"))
        tol = delta if not math.isnan(delta) else 0.5 * 10 ** (-places)
        return _Cmp("assertAlmostEqual", n.args[0], n.args[1], 0.0, tol, n.lineno)
    spec = _CLOSE_CALLS.get(last)
    if spec is None or (spec[0] == "allclose" and not fn.startswith(("np.", "numpy.", "torch."))):
        return None
    kind, rtol, atol = spec
    label = (
        next((k.value for k in n.keywords if k.arg == "err_msg"), None)
        if kind == "assert_allclose"
        else None
    )
    return _Cmp(
        kind,
        n.args[0],
        n.args[1],
        _kw(n, ("rtol",), env, scope, rtol),
        _kw(n, ("atol",), env, scope, atol),
        n.lineno,
        label,
    )


def _compare_comparison(n: ast.Compare, env: dict, scope: _Scope) -> _Cmp | None:
    """``a == approx(b, rel=, abs=)`` (either side; pytest's defaults rel 1e-6, abs 1e-12) or
    ``abs(a - b) < tol`` with a static ``tol``; None for any other comparison."""
    left, right = n.left, n.comparators[0]
    if isinstance(n.ops[0], ast.Eq):
        for a, b in ((left, right), (right, left)):
            if isinstance(b, ast.Call) and _dotted(b.func).endswith("approx") and b.args:
                rel = _kw(b, ("rel",), env, scope, float("nan"))
                ab = _kw(b, ("abs",), env, scope, float("nan"))
                if math.isnan(rel):
                    rel = 0.0 if not math.isnan(ab) else 1e-6
                return _Cmp("approx", a, b.args[0], rel, 1e-12 if math.isnan(ab) else ab, n.lineno)
        return None
    if not isinstance(n.ops[0], (ast.Lt, ast.LtE)):
        return None
    if not (
        isinstance(left, ast.Call)
        and _dotted(left.func) in ("abs", "np.abs", "math.fabs")
        and left.args
        and isinstance(left.args[0], ast.BinOp)
        and isinstance(left.args[0].op, ast.Sub)
    ):
        return None
    try:
        tol = float(_ev(right, env, scope, 0))
    except (_NoValue, TypeError, ValueError):
        return None
    return _Cmp("abs_diff", left.args[0].left, left.args[0].right, 0.0, tol, n.lineno)


def _flat(v) -> tuple[np.ndarray, tuple[int, ...]]:
    if isinstance(v, dict):
        v = list(v.values())
    arr = np.asarray(v, dtype=float)
    if arr.size > MAX_ELEMENTS:
        raise _NoValue("too many elements")
    return arr.reshape(-1), arr.shape


def _squeeze_shape(s: tuple[int, ...]) -> tuple[int, ...]:
    return tuple(x for x in s if x != 1) or (1,)


def recompute(
    kind: str, actual, golden, rtol: float, atol: float, line: int, label: str = ""
) -> Check:
    """Recompute one comparison element by element.

    Args:
        kind: the comparison (``assert_close``, ``assert_allclose``, ``allclose``, ``approx``,
            ``assertAlmostEqual``, ``abs_diff``, ``eq``).
        actual, golden: numbers, (nested) lists or dicts of numbers (dicts by value order).
        rtol, atol: the comparison's tolerances (for ``approx``: rel and abs).
        line: the test line of the comparison.

    Returns:
        A :class:`Check`; shapes that differ (ignoring size-1 axes) leave the element
        figures at 0 apart from the elements both have in common.
    """
    a, sa = _flat(actual)
    g, sg = _flat(golden)
    c = Check(kind, line, label, rtol, atol, tuple(sg), tuple(sa))
    if _squeeze_shape(sa) == _squeeze_shape(sg):
        c.golden_shape = c.actual_shape = tuple(sg)
    n = min(a.size, g.size)
    a, g = a[:n], g[:n]
    c.n = n
    c.actual, c.golden = a.tolist(), g.tolist()
    if not n:
        return c
    diff = a - g
    if kind == "approx":
        allowed = np.maximum(rtol * np.abs(g), atol)
    elif kind in ("assertAlmostEqual", "abs_diff", "eq"):
        allowed = np.full(n, atol)
    else:
        allowed = atol + rtol * np.abs(g)
    ad = np.abs(diff)
    out = ~(ad <= allowed) if kind != "abs_diff" else ~(ad < allowed)
    c.n_out = int(out.sum())
    c.max_abs = float(ad.max())
    with np.errstate(divide="ignore", invalid="ignore"):
        rel = np.where(np.abs(g) > 0, ad / np.abs(g), np.where(ad > 0, np.inf, 0.0))
        exc = np.where(allowed > 0, ad / allowed, np.where(ad > 0, np.inf, 0.0))
    c.max_rel = float(rel.max())
    c.max_excess = float(exc.max())
    nz = diff[ad > 0]
    c.above, c.below = int((nz > 0).sum()), int((nz < 0).sum())
    idx = np.flatnonzero(out)
    c.first_out = int(idx[0]) + 1 if idx.size else None
    c.first_off = bool(out[0])
    if n >= 4:
        q = max(n // 4, 1)
        early, late = float(ad[:q].mean()), float(ad[-q:].mean())
        c.growing = late >= 3 * early and late > float(allowed[-q:].mean())
    return c


def follow_test(
    repo: Path, test: str, given: dict[str, Path], fail_line: int | None = None
) -> Followed | None:
    """Follow the failing test ``test`` (a pytest node id) into ``repo`` and recompute its checks.

    Args:
        repo: the repository root; nothing outside it is read (``given`` files excepted).
        test: ``path::[Class::]func[params]``.
        given: files given on the command line, by base name (they replace repository files).
        fail_line: the test-file line the traceback names (``tests/x.py:25: AssertionError``);
            checks on other lines are still recomputed.

    Returns:
        A :class:`Followed`, or ``None`` when the test file or function is not in ``repo``
        (or not parseable: the note names it).
    """
    root = repo.resolve()
    mod_rel, func = node_location(None, test)  # type: ignore[arg-type]
    p, why = confine(repo, mod_rel)
    if p is None or not p.is_file():
        return None
    tree = _parse(p)
    rel = str(p.relative_to(root)).replace("\\", "/")
    fol = Followed(test, rel, 0)
    if tree is None:
        fol.notes.append(
            f"{rel}: not parsed (a syntax error or over {MAX_SOURCE_BYTES // 2**20} MB); its comparisons are not recomputed"
        )
        return fol
    scope = _Scope(repo, given, fol.notes, fol.missing)
    _conftest_fixtures(root, rel, scope)
    env = _module_env(tree, scope)
    cls_path = [x for x in test.partition("::")[2].split("::")[:-1]]
    cenv: dict = {}
    body = _class_body(tree, cls_path, env, cenv, scope)
    if body is None:
        return None
    for st in tree.body:
        if isinstance(st, ast.FunctionDef) and _is_fixture(st):
            scope.fixtures[st.name] = (st, env)
    fn = next((s for s in body if isinstance(s, ast.FunctionDef) and s.name == func), None)
    if fn is None and not cls_path:
        owner = _only_owner(tree, func)
        if owner is not None:
            return follow_test(repo, f"{mod_rel}::{owner}::{func}", given)
    if fn is None:
        return None
    fol.func_line = fn.lineno
    env = dict(env)
    env["__class__"] = cenv
    pid = test.partition("[")[2][:-1] if "[" in test else ""
    env.update(_param_bindings(fn, pid, env, scope))
    fol.bf16 = (
        any("bfloat16" in str(v) or "bf16" in str(v) for v in env.values() if isinstance(v, str))
        or "bf16" in test
    )
    _bind_fixture_args(fn, env, scope, fol)
    _follow_body(fn.body, env, scope, fol, 0)
    return fol


def _conftest_fixtures(root: Path, rel: str, scope: _Scope) -> None:
    """Register the fixtures of the conftest.py files from the repository root down to the test's
    directory, in that order (a nearer conftest overrides)."""
    parts = Path(rel).parent.parts
    for i in range(len(parts) + 1):
        cp = root.joinpath(*parts[:i], "conftest.py")
        ct = _parse(cp) if cp.is_file() else None
        if ct is not None:
            conf_env = _module_env(ct, scope)
            for st in ct.body:
                if isinstance(st, ast.FunctionDef) and _is_fixture(st):
                    scope.fixtures[st.name] = (st, conf_env)


def _class_body(
    tree: ast.Module, cls_path: list[str], env: dict, cenv: dict, scope: _Scope
) -> list[ast.stmt] | None:
    """The body the test function is defined in: the module's, or its (nested) class's, whose
    class attributes go into ``cenv`` and whose methods and fixtures into ``scope``; None when a
    class of the node id is not in the module."""
    body: list[ast.stmt] = tree.body
    for cname in cls_path:
        cls = next((s for s in body if isinstance(s, ast.ClassDef) and s.name == cname), None)
        if cls is None:
            return None
        body = cls.body
        for st in cls.body:
            if isinstance(st, (ast.Assign, ast.AnnAssign)):
                _run_body([st], cenv, scope, 0)
            elif isinstance(st, ast.FunctionDef):
                scope.methods[st.name] = st
                if _is_fixture(st):
                    scope.fixtures[st.name] = (st, env)
    return body


def _only_owner(tree: ast.Module, func: str) -> str | None:
    """The one class of the module that defines ``func`` (a traceback names the function, not
    its class); None when none or several do."""
    owners = [
        c
        for c in tree.body
        if isinstance(c, ast.ClassDef)
        and any(isinstance(m, ast.FunctionDef) and m.name == func for m in c.body)
    ]
    return owners[0].name if len(owners) == 1 else None


def _bind_fixture_args(fn: ast.FunctionDef, env: dict, scope: _Scope, fol: Followed) -> None:
    """Bind the test's fixture arguments not already bound (a parameter) to their static values;
    a fixture that cannot be followed is noted."""
    for a in fn.args.args:
        if a.arg in scope.fixtures and a.arg not in env:
            try:
                env[a.arg] = _fixture(a.arg, scope, 0)
            except (_NoValue, RecursionError):
                fol.notes.append(
                    f"fixture {a.arg!r} could not be followed (not a static value, or a loop)"
                )


def _scalar_loop(it) -> bool:
    """A loop over numbers or tuples of numbers (``zip(actual, expected)``): one value per pass."""
    return isinstance(it, list) and all(
        isinstance(x, (int, float))
        or (isinstance(x, (list, tuple)) and all(isinstance(y, (int, float)) for y in x))
        for x in it[:100]
    )


def _merge_scalar_checks(checks: list[Check]) -> list[Check]:
    """Checks made element by element in a loop (same line, one value each) as one check."""
    by: dict[tuple, list[Check]] = {}
    for c in checks:
        by.setdefault((c.line, c.kind, c.label), []).append(c)
    out: list[Check] = []
    for group in by.values():
        if len(group) == 1 or any(c.n != 1 for c in group):
            out += group
            continue
        c0 = group[0]
        m = recompute(
            c0.kind,
            [c.actual[0] for c in group],
            [c.golden[0] for c in group],
            c0.rtol,
            c0.atol,
            c0.line,
            c0.label,
        )
        m.golden_src, m.actual_src = c0.golden_src, c0.actual_src
        out.append(m)
    return out


def _follow_body(body: list[ast.stmt], env: dict, scope: _Scope, fol: Followed, d: int) -> None:
    """Follow a test body statement by statement: loops are unrolled (:func:`_follow_loop`),
    ``with`` blocks and assignments executed statically, and every comparison of any other
    statement recomputed (:func:`_check_of`) into ``fol.checks``."""
    for st in body:
        if isinstance(st, ast.For) and isinstance(st.target, (ast.Name, ast.Tuple)):
            _follow_loop(st, env, scope, fol, d)
            continue
        if isinstance(st, ast.With):
            _run_body([st], env, scope, d)
            _follow_body(st.body, env, scope, fol, d)
            continue
        if isinstance(st, (ast.Assign, ast.AnnAssign)):
            _run_body([st], env, scope, d)
            continue
        for cmp in _comparisons(st, env, scope):
            c = _check_of(cmp, env, scope, fol, d)
            if c is not None:
                fol.checks.append(c)


def _follow_loop(st: ast.For, env: dict, scope: _Scope, fol: Followed, d: int) -> None:
    """Unroll a ``for`` loop over a static value (at most :data:`MAX_SCALAR_LOOP` passes over
    numbers, :data:`MAX_LOOP` otherwise); the checks a loop made element by element are merged."""
    try:
        it = _ev(st.iter, env, scope, d)
    except _NoValue:
        return
    if isinstance(it, dict):
        it = list(it.items())
    before = len(fol.checks)
    srcs = _zip_sources(st, env, scope, fol, d)
    assert isinstance(st.target, (ast.Name, ast.Tuple))
    for x in list(it)[: MAX_SCALAR_LOOP if _scalar_loop(it) else MAX_LOOP]:
        local = dict(env)
        local["__srcs__"] = srcs
        if isinstance(st.target, ast.Name):
            local[st.target.id] = x
        elif isinstance(x, (list, tuple)) and len(x) == len(st.target.elts):
            for e, v in zip(st.target.elts, x):
                if isinstance(e, ast.Name):
                    local[e.id] = v
        _follow_body(st.body, local, scope, fol, d)
    fol.checks[before:] = _merge_scalar_checks(fol.checks[before:])


def _zip_sources(st: ast.For, env: dict, scope: _Scope, fol: Followed, d: int) -> dict:
    """Where the loop variables come from: those of ``for a, b in zip(A, B)`` from A's and B's
    files (else the test line), added to the enclosing loops' sources."""
    srcs = dict(env.get("__srcs__", {}))
    if not (
        isinstance(st.iter, ast.Call)
        and _dotted(st.iter.func) == "zip"
        and isinstance(st.target, ast.Tuple)
    ):
        return srcs
    for tgt, arg in zip(st.target.elts, st.iter.args):
        if isinstance(tgt, ast.Name):
            try:
                v = _ev(arg, env, scope, d)
            except _NoValue:
                continue
            srcs[tgt.id] = scope.sources.get(id(v), f"{fol.path}:{st.lineno} ({ast.unparse(arg)})")
    return srcs


def _check_of(cmp: _Cmp, env: dict, scope: _Scope, fol: Followed, d: int) -> Check | None:
    """One comparison recomputed, with the sources of its golden and actual sides and its label;
    None when a side or the recomputation has no static value."""
    try:
        a = _ev(cmp.actual, env, scope, d)
        g = _ev(cmp.golden, env, scope, d)
    except (_NoValue, RecursionError):
        return None
    label = ""
    if cmp.label is not None:
        try:
            label = str(_ev(cmp.label, env, scope, d))
        except _NoValue:
            label = ""
    # which side is golden: the one named or read from a golden-named file
    an, gn = ast.unparse(cmp.actual), ast.unparse(cmp.golden)
    if _GOLDEN_NAME.search(an) and not _GOLDEN_NAME.search(gn):
        a, g, an, gn = g, a, gn, an
    try:
        c = recompute(cmp.kind, a, g, cmp.rtol, cmp.atol, cmp.line, label)
    except (_NoValue, ValueError, TypeError):
        return None
    loop_srcs = env.get("__srcs__", {})
    c.golden_src = scope.sources.get(id(g)) or loop_srcs.get(gn) or f"{fol.path}:{cmp.line} ({gn})"
    c.actual_src = scope.sources.get(id(a)) or loop_srcs.get(an) or f"{fol.path}:{cmp.line} ({an})"
    if not c.label:
        names = [
            str(v)
            for k, v in env.items()
            if k in ("metric", "metric_name", "key", "name") and isinstance(v, str)
        ]
        c.label = names[0] if names else ""
    return c


# decision -------------------------------------------------------------------------------

#: A deviation counts as drift-sized up to this many times the allowed deviation
#: (the same bound as recompute.DRIFT_MAX_EXCESS, docs/ci.md "Drift or regression").
DRIFT_EXCESS = 10.0
#: Share of nonzero deviations on one side that makes a pattern one-signed (docs/ci.md).
ONE_SIDED = 0.9
#: bfloat16 has 8 significant bits: one unit in the last place is 2^-7 of the value at most
#: (2^-8 at least); two units is the rounding of two bf16 computations that differ in order.
BF16_ULP_REL = 2.0**-7


@dataclass
class Decision:
    outcome: str
    cause: str
    confidence: float
    rule: str
    summary: str
    action: str


def _one_sided(c: Check) -> bool:
    n = c.above + c.below
    return n > 0 and max(c.above, c.below) >= ONE_SIDED * n and n >= 2


def _describe(c: Check) -> str:
    where = f"{c.golden_src} vs {c.actual_src}"
    name = f"{c.label}: " if c.label else ""
    tol = (
        f"rel={c.rtol:g}, abs={c.atol:g}"
        if c.kind == "approx"
        else f"rtol={c.rtol:g}, atol={c.atol:g}"
    )
    return (
        f"{name}{c.n_out} of {c.n} elements outside {c.kind}({tol}) (line {c.line}; {where}), "
        f"max abs {c.max_abs:.3g}, max rel {c.max_rel:.3g}, {c.max_excess:.3g}x the allowed deviation, "
        f"{c.above} above / {c.below} below golden"
        + (f", first outside at element {c.first_out}" if c.first_out else "")
        + (", growing" if c.growing else "")
    )


@dataclass
class _Failed:
    """What the decision rules read of a followed test whose checks failed."""

    fol: Followed
    failed: list[Check]
    worst: Check
    desc: str
    env_change: str | None
    seed_band: Check | None

    @property
    def where(self) -> str:
        return f"{self.fol.path}:{self.fol.func_line}"


def decide(
    fol: Followed, env_change: str | None, seed_band: Check | None = None
) -> Decision | None:
    """Outcome and cause of a followed test from its recomputed checks (first rule of
    :data:`_DECISION_RULES` that applies).

    1. a shape/length mismatch -> harness (succeeded / metric_policy);
    2. only time/throughput checks fail, other checks pass -> gate (slow / infra_runtime);
    3. the run lies inside the golden seeds' band -> flaky seed-dependent gate (metric_policy);
    4. bf16 test, deviations within 2 bf16 units in the last place, both signs, not growing ->
       tolerance tighter than bf16 (metric_policy);
    5. one-signed, growing or > :data:`DRIFT_EXCESS` x the tolerance -> regression
       (regressed / model_convergence; correctness_bug when already off at element 1 while
       the pattern is one-signed and not growing from a matching start);
    6. both signs, <= :data:`DRIFT_EXCESS` x, not growing -> drift (metric_policy; confidence
       0.8 after an environment change, else 0.6).

    Returns ``None`` when no check failed (nothing to explain).
    """
    failed = [c for c in fol.checks if c.failed]
    if not failed:
        return None
    worst = max(failed, key=lambda c: c.max_excess)
    facts = _Failed(fol, failed, worst, _describe(worst), env_change, seed_band)
    return next(d for rule in _DECISION_RULES if (d := rule(facts)) is not None)


def _shape_rule(x: _Failed) -> Decision | None:
    """A check whose golden and actual shapes differ: the harness, not the model."""
    shape = [c for c in x.failed if c.shape_mismatch]
    if not shape:
        return None
    c = shape[0]
    common_ok = c.n_out == 0
    return Decision(
        "succeeded",
        "metric_policy",
        0.8 if common_ok else 0.6,
        "shape-mismatch",
        f"Harness error, not a model regression: {x.fol.test} compares golden of shape "
        f"{c.golden_shape} ({c.golden_src}) with actual of shape {c.actual_shape} "
        f"({c.actual_src}) at {x.fol.path}:{c.line}; the {c.n} elements both have "
        + ("agree within the tolerance." if common_ok else f"differ ({c.n_out} outside)."),
        "Make the run and the golden file cover the same elements (regenerate the golden "
        "values for the new length or restore the run's length); do not widen the tolerance",
    )


def _timing_rule(x: _Failed) -> Decision | None:
    """Only time/throughput checks failed while other checks passed: the runner, not the model."""
    timing = [c for c in x.failed if _TIME_WORDS.search(c.label or "")]
    others = [c for c in x.fol.checks if not _TIME_WORDS.search(c.label or "")]
    if not (timing and len(timing) == len(x.failed) and others):
        return None
    return Decision(
        "slow",
        "infra_runtime",
        0.8,
        "throughput-only",
        f"Only the time/throughput check failed ({len(others)} other checks, the loss among them, "
        "are within tolerance). Failing: "
        + "; ".join(_describe(c) for c in timing)
        + f" ({x.where}). Not a model regression.",
        "Look at the runner (node load, clocks, data loading) and rerun; the losses match",
    )


def _seed_band_rule(x: _Failed) -> Decision | None:
    """Every element inside the golden seeds' band: a gate tighter than the seed spread."""
    if x.seed_band is None or x.seed_band.n_out != 0:
        return None
    return Decision(
        "succeeded",
        "metric_policy",
        0.75,
        "inside-seed-band",
        f"Seed-dependent gate: {x.desc}; yet every element lies inside the band of the golden "
        f"seeds ({x.seed_band.golden_src}). The gate is tighter than the run-to-run spread.",
        "Pin the seed the golden values were recorded with, or set the tolerance from the "
        "seeds' spread",
    )


def _bf16_rule(x: _Failed) -> Decision | None:
    """A bf16 test whose deviations are within 2 bf16 units, both signs, not growing."""
    w = x.worst
    if not (x.fol.bf16 and not _one_sided(w) and not w.growing and w.max_rel <= 2 * BF16_ULP_REL):
        return None
    return Decision(
        "succeeded",
        "metric_policy",
        0.75,
        "tighter-than-bf16",
        f"Tolerance tighter than bf16: {x.desc}; the test runs in bfloat16, whose resolution "
        f"is 2^-8..2^-7 of a value, and the largest deviation is {w.max_rel / BF16_ULP_REL:.2g} "
        "bf16 units, both signs, not growing.",
        f"Set the tolerance to the bf16 resolution (rtol >= {2 * BF16_ULP_REL:.3g}) and keep "
        "an fp32 run for tight checks",
    )


def _regression_rule(x: _Failed) -> Decision | None:
    """One-signed, growing or beyond :data:`DRIFT_EXCESS` x the tolerance: a real change; a
    correctness bug when already far off at the first element and not growing."""
    w = x.worst
    mixed = not _one_sided(w)
    if not (not mixed or w.growing or w.max_excess > DRIFT_EXCESS):
        return None
    why = ", ".join(
        reason
        for reason, ok in (
            ("one-signed", not mixed),
            ("growing", w.growing),
            (f"{w.max_excess:.3g}x the tolerance", w.max_excess > DRIFT_EXCESS),
        )
        if ok
    )
    cause = (
        "correctness_bug"
        if w.first_off and not w.growing and w.max_excess > DRIFT_EXCESS and w.max_rel > 0.1
        else "model_convergence"
    )
    return Decision(
        "regressed",
        cause,
        0.8,
        "regression",
        f"A real change ({why}), not numerical drift: {x.desc}.",
        "Bisect the commits since the last green run; do not refresh the golden values",
    )


def _drift_rule(x: _Failed) -> Decision:
    """Small deviations of both signs, not growing: numerical drift (surer after an environment
    change)."""
    env_change = x.env_change
    return Decision(
        "succeeded",
        "metric_policy",
        0.8 if env_change else 0.6,
        "drift",
        f"Numerical drift{' after ' + env_change if env_change else ''}, not a model regression: "
        f"{x.desc}: small deviations of both signs, at most {DRIFT_EXCESS:g}x the tolerance, not growing."
        + ("" if env_change else " Confirm with a rerun on the old environment."),
        f"Refresh the golden values for the new environment or widen the tolerance to "
        f"{2 * x.worst.max_excess:.2g}x its value; keep the gate",
    )


#: The decision rules of :func:`decide`, in precedence order; the last always applies.
_DECISION_RULES: tuple[Callable[[_Failed], Decision | None], ...] = (
    _shape_rule,
    _timing_rule,
    _seed_band_rule,
    _bf16_rule,
    _regression_rule,
    _drift_rule,
)


def seed_band_check(repo: Path, fol: Followed) -> Check | None:
    """The failing check's actual values against the band of golden files recorded per seed.

    Golden files named ``*seed<N>*`` (JSON lists or ``{"metric": [...]}``) next to the test or in
    a ``golden`` folder beside it, with the failing check's length; the band is per element
    [min, max] over the seeds. Returns a check whose ``n_out`` counts elements outside the band.
    """
    from .golden import read_json_capped

    failed = [c for c in fol.checks if c.failed and not c.shape_mismatch]
    if not failed:
        return None
    actual = failed[0].actual
    root = repo.resolve()
    base = (root / fol.path).parent
    series = []
    srcs = []
    for d in (base, base / "golden", base / "goldens"):
        if not d.is_dir():
            continue
        for f in sorted(d.glob("*seed*.json"))[:32]:
            try:
                doc = read_json_capped(f, f.name)
            except Exception:  # noqa: BLE001 - any unreadable file is left out of the band
                continue
            vals = (
                doc
                if isinstance(doc, list)
                else next((v for v in doc.values() if isinstance(v, list)), None)
                if isinstance(doc, dict)
                else None
            )
            if vals is not None and len(vals) == len(actual):
                series.append(np.asarray(vals, dtype=float))
                srcs.append(str(f.relative_to(root)))
    if len(series) < 2:
        return None
    s = np.vstack(series)
    lo, hi = s.min(0), s.max(0)
    a = np.asarray(actual, dtype=float)
    c = Check("seed_band", failed[0].line, failed[0].label, 0.0, 0.0, (a.size,), (a.size,))
    c.n = a.size
    c.n_out = int(((a < lo) | (a > hi)).sum())
    c.golden_src = ", ".join(srcs)
    return c


_UNITTEST = re.compile(r"^(?:FAIL|ERROR): (?P<m>\w+) \((?P<d>[\w.]+)\)")
_TB_FRAME = re.compile(r'File "(?P<p>[^"]+\.py)", line (?P<l>\d+), in (?P<f>test\w*)')


def failing_tests(ctx, lines: list[str], repo: Path) -> list[str]:
    """Node ids of the failing tests: pytest's (``FAILED path::test``), unittest's
    (``FAIL: test_loss (tests.test_eval.EvalTest[.test_loss])``) and the test frames of a
    traceback (``File ".../tests/test_eval.py", line 11, in test_loss``; an absolute runner
    path is matched to the repository file its tail names)."""
    out = [t.test for t in ctx.tests if t.outcome in ("failed", "error") and "::" in t.test]
    root = repo.resolve()
    for text in lines:
        m = _UNITTEST.match(text.strip())
        if m:
            parts = m["d"].split(".")
            if parts[-1] == m["m"]:
                parts = parts[:-1]
            if len(parts) >= 2:
                out.append("/".join(parts[:-1]) + ".py::" + parts[-1] + "::" + m["m"])
            continue
        f = _TB_FRAME.search(text) if 'File "' in text else None
        if f:
            tail = Path(f["p"]).parts
            for i in range(len(tail)):
                cand = "/".join(tail[i:])
                q, _ = confine(repo, cand)
                if q is not None and q.is_file():
                    out.append(str(q.relative_to(root)).replace("\\", "/") + "::" + f["f"])
                    break
    return list(dict.fromkeys(out))


def _env_change(ctx) -> str | None:
    for e in ctx.env_changes:
        if e.old or e.new:
            return f"{e.name} {e.old or '?'} -> {e.new or '?'} ({e.source}:{e.line})"
    return None


def follow_verdict(repo: Path, ctx, given: dict[str, Path], lines: list[str] | None = None):
    """A verdict from the failing tests followed to their numbers, or ``None``.

    Args:
        repo: the repository root.
        ctx: the collected CI context (its failed tests, environment changes).
        given: files given on the command line by base name.
        lines: the logs' lines (unittest and traceback test names are read from them).

    Returns:
        ``(CIVerdict, Finding)`` (finding ``CI012 ci-test-followed``) when a failing test's
        comparisons were recomputed and decide the case, or when the files it reads are
        missing (unknown, naming them and what to pass); ``None`` otherwise.
    """
    from ..report import Cause, CodeEvidence, Evidence, Finding, NextAction, Outcome, Severity
    from .model import CIVerdict

    failed = failing_tests(ctx, lines or [], repo)
    decisions: list[tuple[Followed, Decision]] = []
    missing: list[tuple[Followed, str]] = []
    for test in dict.fromkeys(failed[:50]):
        try:
            fol = follow_test(repo, test, given)
        except RecursionError:
            ctx.notes.append(f"{test}: nesting too deep to follow; not recomputed")
            continue
        if fol is None:
            continue
        for n in fol.notes:
            if n not in ctx.notes:
                ctx.notes.append(n)
        d = decide(fol, _env_change(ctx), seed_band_check(repo, fol))
        if d is not None:
            decisions.append((fol, d))
        elif fol.missing:
            missing.extend((fol, m) for m in fol.missing)
    if decisions:
        rank = {
            "regression": 0,
            "shape-mismatch": 1,
            "drift": 2,
            "tighter-than-bf16": 2,
            "inside-seed-band": 2,
            "throughput-only": 3,
        }
        fol, d = min(decisions, key=lambda x: rank.get(x[1].rule, 9))
        ev: list[Evidence] = [
            CodeEvidence(path=fol.path, line=c.line, text=_describe(c))
            for c in [c for c in fol.checks if c.failed][:5]
        ]
        f = Finding(
            code="CI012",
            name="ci-test-followed",
            severity=Severity.ERROR if d.outcome == "regressed" else Severity.WARNING,
            message=f"{fol.test}: {d.summary} (rule: {d.rule})",
            evidence=ev,
            facts={
                "rule": d.rule,
                "test": fol.test,
                "checks": len(fol.checks),
                "failed_checks": sum(c.failed for c in fol.checks),
            },
        )
        v = CIVerdict(
            Outcome(d.outcome),
            Cause(d.cause),
            d.confidence,
            d.summary,
            f,
            [NextAction(action=d.action, why=f"rule {d.rule}: {fol.path}:{fol.func_line}")],
            rule=f"follow:{d.rule}",
        )
        return v, f
    # the trace pass already names the files it found missing (classify's own abstention)
    if missing and not any(t.status == "missing" for t in ctx.traced):
        fol, m = missing[0]
        role = "--golden" if _GOLDEN_NAME.search(m) else "--logs"
        msg = (
            f"{fol.test} ({fol.path}:{fol.func_line}) reads {m}, which was neither in --logs nor "
            f"in the repository: pass it with {role} {Path(m).name}"
        )
        f = Finding(
            code="CI012",
            name="ci-test-followed",
            severity=Severity.WARNING,
            message=msg,
            evidence=[CodeEvidence(path=fol.path, line=fol.func_line, text=msg)],
        )
        v = CIVerdict(
            Outcome("unknown"),
            Cause.INCONCLUSIVE,
            0.3,
            "Not judged: " + msg,
            f,
            [NextAction(action=f"Pass {role} {Path(m).name}", why=msg)],
            rule="follow:missing",
        )
        return v, f
    return None


def _csv_cell(text: str) -> object:
    """A CSV cell as ``pandas.read_csv`` types it in a one-type column: int, float or str."""
    try:
        return int(text)
    except ValueError:
        pass
    try:
        return float(text)
    except ValueError:
        return text


def _read_csv_columns(path: Path) -> dict[str, list]:
    """The columns a test's ``pd.read_csv(path)`` gives, as lists: with pandas when it is
    installed, else the standard library's reader (cells typed int, float or str; an empty
    cell NaN)."""
    from .._optional import pandas

    pd = pandas()
    if pd is not None:
        return {c: pd.read_csv(path)[c].tolist() for c in pd.read_csv(path, nrows=0).columns}
    import csv

    try:
        with open(path, encoding="utf-8", newline="") as fh:
            rows = [r for r in csv.reader(fh) if r]
    except csv.Error as exc:  # the caller reports ValueError as the file's problem
        raise ValueError(f"{path.name}: {exc}") from None
    if not rows:
        raise ValueError(f"{path.name}: no columns to parse from the file")
    names, body = rows[0], rows[1:]
    return {
        name: [
            _csv_cell(r[j].strip()) if j < len(r) and r[j].strip() else float("nan") for r in body
        ]
        for j, name in enumerate(names)
    }
