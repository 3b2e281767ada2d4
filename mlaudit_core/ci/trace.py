"""Follow a test named in the CI log into its source and find the files it reads.

Given the tests of a log (``FAILED tests/test_train.py::test_loss - ...`` and the
``tests/test_train.py:25: AssertionError`` location under a traceback), each test
function is parsed with :mod:`ast` (never imported or executed) and the files it
reads are found: calls ``open(P)``, ``json.load(open(P))``, ``P.read_text()``,
``P.open()``, ``np.load(P)`` / ``np.loadtxt`` / ``np.genfromtxt``,
``pd.read_csv(P)`` / ``pd.read_json(P)``, in the test function, in the pytest
fixtures it takes (same module or a ``conftest.py`` between it and the
repository root), in module-level functions it calls (one level) and at module
level. ``P`` is evaluated as a path expression: string literals,
``Path(__file__)``, ``.parent`` / ``.parents[i]`` / ``.resolve()``, ``/``,
``os.path.join`` / ``dirname`` / ``abspath``, and names assigned from such
expressions at module or function level. A relative literal is taken relative
to the repository root (pytest's usual working directory), then to the test's
directory.

Each file found is classified golden (its name or the variable it is bound to
says golden / expected / reference / baseline) or actual, and looked up:

1. a file given on the command line (``--logs`` / ``--golden``) with the same
   name is used as given;
2. otherwise a file inside the repository is read (JSON with size and depth
   limits, CSV, ``.npy`` / ``.npz`` without pickle);
3. a path that leaves the repository (absolute, ``..``) is refused and never
   opened, with one note naming it;
4. otherwise the file is *missing*: the report says which test reads it and
   that it was neither in the logs nor in the repository.

Names bound to a loaded JSON document (``GOLDEN = json.load(open(...))``) are
handed to the gate scanner so tolerances read from the file
(``pytest.approx(ref, rel=GOLDEN["rtol"])``) are known.

Expected values written in the test itself are golden values too
(:func:`literal_goldens`): ``results == pytest.approx({"eval_loss": 0.41, "acc": 0.88},
rel=1e-3)``, ``EXPECTED = {...}`` at module or function level, ``approx(0.41)`` against
``metrics["eval_loss"]``, ``assert_allclose(m["loss"], [2.30, 2.11])``, read with
:func:`ast.literal_eval` (never evaluated). A dict is compared key by key, as pytest.approx
does (a mapping of scalars; pytest refuses nested containers with a ``TypeError``).
"""

from __future__ import annotations

import ast
import posixpath
import re
from dataclasses import dataclass, field
from pathlib import Path

from ..errors import InputError
from .gates import MAX_BYTES, parse_python
from .golden import TooBig, TooDeep, load_values, read_json_capped
from .model import CIContext, TracedInput

_DATA_EXT = (".json", ".csv", ".tsv", ".npy", ".npz", ".jsonl")
_LOADERS = {
    "open": "open",
    "io.open": "open",
    "np.load": "np.load",
    "numpy.load": "np.load",
    "np.loadtxt": "np.loadtxt",
    "numpy.loadtxt": "np.loadtxt",
    "np.genfromtxt": "np.genfromtxt",
    "numpy.genfromtxt": "np.genfromtxt",
    "pd.read_csv": "pd.read_csv",
    "pandas.read_csv": "pd.read_csv",
    "pd.read_json": "pd.read_json",
    "pandas.read_json": "pd.read_json",
}
_METHOD_LOADERS = {"read_text", "read_bytes", "open"}
_GOLDEN_WORDS = re.compile(r"golden|expected|reference|(^|_)ref(_|$)|baseline|gold", re.IGNORECASE)


class _Unknown:
    """A path expression that could not be evaluated."""


_UNKNOWN = _Unknown()


@dataclass
class ModuleSource:
    """A test module as parsed: its relative path, text, tree and module-level path names."""

    rel: str
    text: str
    tree: ast.Module
    env: dict[str, object] = field(default_factory=dict)
    functions: dict[str, ast.FunctionDef | ast.AsyncFunctionDef] = field(default_factory=dict)


def _dotted(node: ast.AST) -> str:
    parts = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    if isinstance(node, ast.Name):
        parts.append(node.id)
        return ".".join(reversed(parts))
    return ""


def confine(repo: Path, name: str) -> tuple[Path | None, str]:
    """A path named in a log or a test, inside ``repo``: (path or None, reason when refused).

    A relative path is joined to the repository and must stay inside it once ``..`` and
    symlinks are resolved. An absolute path is accepted only when it points inside the
    repository, or when a suffix of it (``/home/runner/work/x/x/tests/test_a.py`` ->
    ``tests/test_a.py``) names a file of the repository (a CI runner's checkout path);
    anything else (``/proc/self/environ``, ``../secrets.json``) is refused, never opened.
    """
    root = repo.resolve()
    p = Path(name)
    if p.is_absolute():
        try:
            rp = p.resolve()
            rp.relative_to(root)
            return rp, ""
        except (ValueError, OSError):
            pass
        parts = p.parts[1:]
        for i in range(len(parts) - 1, 0, -1):
            cand = root.joinpath(*parts[i:])
            # only suffixes that start at a directory of the repo count (not any file name)
            if i < len(parts) - 1 and cand.is_file():
                try:
                    cand.resolve().relative_to(root)
                    return cand.resolve(), ""
                except (ValueError, OSError):
                    return None, "outside the repository"
        return None, "an absolute path outside the repository"
    try:
        rp = (root / p).resolve()
        rp.relative_to(root)
    except (ValueError, OSError):
        return None, "outside the repository"
    return rp, ""


def _eval_path(node: ast.AST, env: dict[str, object], test_rel: str) -> object:
    """A repo-relative POSIX path string (may hold ``..``) for a path expression, else _UNKNOWN:
    a string, a name bound in ``env`` (``__file__`` is the test file), a path-building call
    (:func:`_call_path`), ``.parent`` / ``.parents[i]``, ``a / b`` and ``a + b``."""
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return node.value
    if isinstance(node, ast.Name):
        return test_rel if node.id == "__file__" else env.get(node.id, _UNKNOWN)
    if isinstance(node, ast.Call):
        return _call_path(node, env, test_rel)
    if isinstance(node, ast.Attribute) and node.attr == "parent":
        v = _eval_path(node.value, env, test_rel)
        return (posixpath.dirname(v) or ".") if isinstance(v, str) else _UNKNOWN
    if isinstance(node, ast.Subscript):
        return _parents_path(node, env, test_rel)
    if isinstance(node, ast.BinOp) and isinstance(node.op, (ast.Div, ast.Add)):
        a, b = _eval_path(node.left, env, test_rel), _eval_path(node.right, env, test_rel)
        if not isinstance(a, str) or not isinstance(b, str):
            return _UNKNOWN
        return posixpath.join(a, b) if isinstance(node.op, ast.Div) else a + b
    return _UNKNOWN


#: Calls that join their arguments into a path (by the callee's last name / its dotted name),
#: that take a path's directory, and that return their path argument as it is.
_PATH_TYPES = ("Path", "PurePath", "PosixPath")
_JOIN_FUNCS = ("os.path.join", "path.join", "join")
_DIRNAME_FUNCS = ("os.path.dirname", "path.dirname", "dirname")
_SAME_PATH_FUNCS = ("os.path.abspath", "os.path.realpath", "os.path.normpath", "str", "os.fspath")
_SAME_PATH_METHODS = ("resolve", "absolute", "expanduser")


def _call_path(node: ast.Call, env: dict[str, object], test_rel: str) -> object:
    """The path a call builds: ``Path(a, b)`` / ``os.path.join(a, b)`` / ``p.joinpath(b)`` join,
    ``os.path.dirname(p)`` the directory, ``str(p)``, ``abspath(p)``, ``p.resolve()`` and the like
    the path itself; any other call is _UNKNOWN."""
    fn = _dotted(node.func)
    method = node.func.attr if isinstance(node.func, ast.Attribute) else None
    if node.args and (fn.rsplit(".", 1)[-1] in _PATH_TYPES or fn in _JOIN_FUNCS):
        vals = _known_paths(node.args, env, test_rel)
        return _UNKNOWN if vals is None else posixpath.join(*vals)
    if fn in _DIRNAME_FUNCS and node.args:
        v = _eval_path(node.args[0], env, test_rel)
        return posixpath.dirname(v) or "." if isinstance(v, str) else _UNKNOWN
    if fn in _SAME_PATH_FUNCS:
        return _eval_path(node.args[0], env, test_rel) if node.args else _UNKNOWN
    if isinstance(node.func, ast.Attribute) and method in _SAME_PATH_METHODS:
        return _eval_path(node.func.value, env, test_rel)
    if isinstance(node.func, ast.Attribute) and method == "joinpath":
        vals = _known_paths([node.func.value, *node.args], env, test_rel)
        return _UNKNOWN if vals is None else posixpath.join(*vals)
    return _UNKNOWN


def _parents_path(node: ast.Subscript, env: dict[str, object], test_rel: str) -> object:
    """``p.parents[i]``: the directory ``i + 1`` levels up; any other subscript is _UNKNOWN."""
    if not (
        isinstance(node.value, ast.Attribute)
        and node.value.attr == "parents"
        and isinstance(node.slice, ast.Constant)
    ):
        return _UNKNOWN
    v = _eval_path(node.value.value, env, test_rel)
    if not isinstance(v, str) or not isinstance(node.slice.value, int):
        return _UNKNOWN
    for _ in range(node.slice.value + 1):
        v = posixpath.dirname(v) or "."
    return v


def _known_paths(nodes: list[ast.expr], env: dict[str, object], test_rel: str) -> list[str] | None:
    """The paths of ``nodes`` (:func:`_eval_path`), or ``None`` when one of them is unknown."""
    vals = [_eval_path(a, env, test_rel) for a in nodes]
    known = [v for v in vals if isinstance(v, str)]
    return known if len(known) == len(vals) else None


def _assign_env(stmts, env: dict[str, object], test_rel: str) -> None:
    for st in stmts:
        if (
            isinstance(st, ast.Assign)
            and len(st.targets) == 1
            and isinstance(st.targets[0], ast.Name)
        ):
            v = _eval_path(st.value, env, test_rel)
            if v is not _UNKNOWN:
                env[st.targets[0].id] = v


def parse_test_source(path: Path, rel: str) -> ModuleSource | None:
    """Parse a test module (at most :data:`~.gates.MAX_BYTES`); ``None`` when unreadable/invalid."""
    try:
        if path.stat().st_size > MAX_BYTES:
            return None
        text = path.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return None
    tree = parse_python(text)
    if tree is None:
        return None
    ts = ModuleSource(rel, text, tree)
    _assign_env(tree.body, ts.env, rel)
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            ts.functions.setdefault(node.name, node)
    return ts


@dataclass
class _Load:
    path: str
    how: str
    line: int
    bound: str | None  # variable the loaded content is assigned to
    json: bool


def _loads_in(nodes, env: dict[str, object], test_rel: str, parents: dict[int, ast.AST]):
    """Every data-file read under ``nodes`` (an iterable of AST roots)."""
    out: list[_Load] = []
    for root in nodes:
        for node in ast.walk(root):
            if not isinstance(node, ast.Call):
                continue
            fn = _dotted(node.func)
            target = None
            how = ""
            if fn in _LOADERS and node.args:
                target, how = node.args[0], _LOADERS[fn]
            elif isinstance(node.func, ast.Attribute) and node.func.attr in _METHOD_LOADERS:
                target, how = node.func.value, node.func.attr
            if target is None:
                continue
            v = _eval_path(target, env, test_rel)
            if not isinstance(v, str) or not v.lower().endswith(_DATA_EXT):
                continue
            # what the content is bound to, and whether it goes through json
            bound, is_json = None, False
            cur: ast.AST = node
            for _ in range(6):
                par = parents.get(id(cur))
                if par is None:
                    break
                if isinstance(par, ast.Call) and _dotted(par.func) in ("json.load", "json.loads"):
                    is_json = True
                if isinstance(par, ast.Assign) and len(par.targets) == 1:
                    t = par.targets[0]
                    bound = t.id if isinstance(t, ast.Name) else None
                    break
                if isinstance(par, ast.withitem) and isinstance(par.optional_vars, ast.Name):
                    bound = par.optional_vars.id
                    break
                cur = par
            out.append(_Load(v, how, node.lineno, bound, is_json or v.lower().endswith(".json")))
    return out


def _role(path: str, bound: str | None) -> str:
    if _GOLDEN_WORDS.search(posixpath.basename(path)) or (bound and _GOLDEN_WORDS.search(bound)):
        return "golden"
    return "actual"


def _conftest_fixtures(
    repo: Path, test_rel: str, cache: dict
) -> dict[str, tuple[ModuleSource, ast.FunctionDef]]:
    """Fixtures (functions) of the ``conftest.py`` files from the repo root to the test's directory."""
    out: dict[str, tuple[ModuleSource, ast.FunctionDef]] = {}
    parts = posixpath.dirname(test_rel).split("/") if posixpath.dirname(test_rel) else []
    for i in range(len(parts) + 1):
        rel = posixpath.join(*parts[:i], "conftest.py") if i else "conftest.py"
        if rel not in cache:
            p = repo / rel
            cache[rel] = parse_test_source(p, rel) if p.is_file() else None
        ts = cache[rel]
        if ts is not None:
            for name, fn in ts.functions.items():
                out[name] = (ts, fn)
    return out


def node_location(ctx: CIContext, test: str) -> tuple[str, str]:
    """(module path, function name) of a pytest node id ``path::[Class::]func[param]``."""
    path, _, rest = test.partition("::")
    func = rest.split("::")[-1].split("[")[0]
    return path, func


def _parents(tree: ast.AST) -> dict[int, ast.AST]:
    """Each node's parent, by ``id`` of the child."""
    parents: dict[int, ast.AST] = {}
    for node in ast.walk(tree):
        for ch in ast.iter_child_nodes(node):
            parents[id(ch)] = node
    return parents


class _Tracer:
    """The state of one :func:`trace_tests` pass: parsed test modules and conftest fixtures,
    the files read so far (each read once) and the data each test module loads."""

    def __init__(self, repo: Path, ctx: CIContext, given: dict[str, Path], load_golden: bool):
        self.repo, self.root, self.ctx = repo, repo.resolve(), ctx
        self.given, self.load_golden = given, load_golden
        self.modules: dict[str, ModuleSource | None] = {}
        self.conf_cache: dict = {}
        self.data_out: dict[str, tuple[dict, dict]] = {}
        self.loaded: dict[str, str] = {}  # resolved path -> status, so a file is read once
        self.have_sources = {s.source for s in ctx.goldens + ctx.actuals}
        self.refused_notes: set[str] = set()
        self.suffix_cache: dict[str, Path | None] = {}

    def module_path(self, mod_rel: str) -> Path | None:
        """The test module's file: inside the repository, or the one repository file whose path
        ends with the node id's path (pytest ran from a sub-directory: node ids are relative to
        its rootdir)."""
        p, why = confine(self.repo, mod_rel)
        if p is None:
            note = f"{mod_rel}: {why}; not opened"
            if note not in self.refused_notes:
                self.refused_notes.add(note)
                self.ctx.notes.append(note)
            return None
        if p.is_file():
            return p
        if mod_rel not in self.suffix_cache:
            from .gates import iter_files

            hits = [
                q
                for q in iter_files(self.repo)
                if str(q.resolve().relative_to(self.root))
                .replace("\\", "/")
                .endswith("/" + mod_rel)
            ]
            self.suffix_cache[mod_rel] = hits[0].resolve() if len(hits) == 1 else None
        return self.suffix_cache[mod_rel]

    def trace(self, test: str) -> None:
        """Follow one test into its module: what it (its helpers, its fixtures) reads."""
        mod_rel, func = node_location(self.ctx, test)
        p = self.module_path(mod_rel)
        if p is None:
            return
        rel = str(p.relative_to(self.root)).replace("\\", "/")
        if rel not in self.modules:
            self.modules[rel] = parse_test_source(p, rel)
        ts = self.modules[rel]
        if ts is None or func not in ts.functions:
            return
        loads = self._loads(ts, ts.functions[func], func, rel)
        data, sources = self.data_out.setdefault(rel, ({}, {}))
        for ld in loads:
            self._input(test, func, rel, ld, data, sources)

    def _loads(self, ts: ModuleSource, fn, func: str, rel: str) -> list:
        """The reads of the test function, the module-level code, the helpers it calls by name
        and the fixtures it takes (same module, then conftest.py)."""
        env = dict(ts.env)
        _assign_env(fn.body, env, rel)
        roots: list[ast.AST] = [
            st
            for st in ts.tree.body
            if not isinstance(st, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef))
        ]
        roots.append(fn)
        called = {
            n.func.id
            for n in ast.walk(fn)
            if isinstance(n, ast.Call) and isinstance(n.func, ast.Name)
        }
        args = {a.arg for a in fn.args.args}
        fixtures = _conftest_fixtures(self.repo, rel, self.conf_cache)
        extra: list[tuple[ModuleSource, ast.FunctionDef | ast.AsyncFunctionDef]] = []
        for name in sorted(called | args):
            if name in ts.functions and name != func:
                roots.append(ts.functions[name])
            elif name in args and name in fixtures:
                extra.append(fixtures[name])
        loads = _loads_in(roots, env, rel, _parents(ts.tree))
        if self.load_golden:
            have_lit = {s.source for s in self.ctx.goldens}
            lit = [x for x in literal_goldens(ts, fn) if x.source not in have_lit]
            self.ctx.goldens[:0] = lit  # the values the failing test itself expects come first
        for cts, cfn in extra:
            cenv = dict(cts.env)
            _assign_env(cfn.body, cenv, cts.rel)
            loads += _loads_in([cfn], cenv, cts.rel, _parents(cts.tree))
        return loads

    def _target(self, rec: TracedInput, norm: str, rel: str, func: str, line: int) -> Path | None:
        """The file a read names: given on the command line, else inside the repository (next
        to the test module for a bare name); sets ``rec``'s status and detail when it is not."""
        base = posixpath.basename(norm)
        if base in self.given:
            rec.status, rec.detail = "given", f"given on the command line as {self.given[base]}"
            return self.given[base]
        cand = [norm]
        if not norm.startswith(("/", "..")) and "/" not in norm:
            cand.append(posixpath.normpath(posixpath.join(posixpath.dirname(rel), norm)))
        reason = ""
        for c in cand:
            q, reason = confine(self.repo, c)
            if q is not None and q.is_file():
                return q
        if reason and all(confine(self.repo, c)[0] is None for c in cand):
            rec.status, rec.detail = "refused", f"{norm}: {reason}; not opened"
        else:
            rec.detail = (
                f"{rel}:{line} ({func}) reads {norm}, which is neither in --logs nor "
                "in the repository"
            )
        return None

    def _input(self, test: str, func: str, rel: str, ld, data: dict, sources: dict) -> None:
        """One file a test reads: found, read once (values and JSON data), recorded in
        ``ctx.traced``."""
        ctx = self.ctx
        role = _role(ld.path, ld.bound)
        norm = posixpath.normpath(ld.path)
        rec = TracedInput(test, norm, role, "missing", rel, ld.line, ld.how)
        target = self._target(rec, norm, rel, func, ld.line)
        if target is not None:
            disp = (
                str(target.resolve().relative_to(self.root)).replace("\\", "/")
                if rec.status != "given"
                else str(target)
            )
            key = str(target.resolve())
            if key not in self.loaded:
                self.loaded[key] = self._read(target, disp, ld, rec, role, data, sources)
                if rec.detail and self.loaded[key] != "loaded":
                    ctx.notes.append(rec.detail)
            elif ld.json and ld.bound and self.loaded[key] == "loaded" and ld.bound not in data:
                try:
                    doc = read_json_capped(target, disp)
                    if isinstance(doc, dict):
                        data[ld.bound], sources[ld.bound] = doc, disp
                except InputError:
                    pass
            if rec.status != "given":
                rec.status = self.loaded[key]
            rec.path = disp if rec.status != "given" else norm
        elif rec.status == "refused" and rec.detail not in ctx.notes:
            ctx.notes.append(rec.detail)
        if not any((x.test, x.path, x.line) == (rec.test, rec.path, rec.line) for x in ctx.traced):
            ctx.traced.append(rec)

    def _read(
        self, target: Path, disp: str, ld, rec: TracedInput, role: str, data: dict, sources: dict
    ) -> str:
        """Read a file a test reads: its JSON bound to a name, its values as golden / actual /
        reference sets. Returns the status (loaded, too_deep, too_big, unreadable)."""
        status = "loaded"
        try:
            if ld.json:
                doc = read_json_capped(target, disp)
                if ld.bound and isinstance(doc, dict):
                    data[ld.bound] = doc
                    sources[ld.bound] = disp
            if (
                rec.status != "given"
                and disp not in self.have_sources
                and (self.load_golden or role != "golden")
            ):
                for s in load_values(target, role, disp):
                    s.label = s.label or "test"
                    {"golden": self.ctx.goldens, "reference": self.ctx.references}.get(
                        s.role, self.ctx.actuals
                    ).append(s)
                self.have_sources.add(disp)
        except TooDeep as exc:
            status, rec.detail = "too_deep", str(exc)
        except TooBig as exc:
            status, rec.detail = "too_big", str(exc)
        except InputError as exc:
            if "no metric values" in str(exc) and ld.json:
                status = "loaded"  # a settings file (tolerances), read as data
            else:
                status, rec.detail = "unreadable", str(exc)
        return status


def trace_tests(
    repo: Path, ctx: CIContext, given: dict[str, Path], load_golden: bool = True
) -> dict[str, tuple[dict, dict]]:
    """Trace the tests of the log into the repository (see the module docstring).

    Args:
        repo: the repository root.
        ctx: the context; its ``tests`` and ``assertions`` name the tests. Fills ``traced``,
            ``notes``, and adds the value sets read to ``goldens`` / ``actuals``.
        given: files given on the command line by base name.
        load_golden: read the golden values of the files the tests read (``False`` when the
            user gave ``--golden``: those win; the files are still read for tolerances).

    Returns:
        ``{test module rel path: (data, sources)}``: module-level names bound to loaded JSON
        documents and the file each came from, for :func:`~.gates.scan_python`.
    """
    tests: list[str] = []
    for t in sorted(ctx.tests, key=lambda t: t.outcome not in ("failed", "error")):
        if t.test not in tests:
            tests.append(t.test)
    tracer = _Tracer(repo, ctx, given, load_golden)
    for test in tests[:200]:
        tracer.trace(test)
    return {k: v for k, v in tracer.data_out.items() if v[0]}


_EXPECTED_CALLS = {
    "approx": 0,
    "assert_allclose": 1,
    "assert_close": 1,
    "assert_array_almost_equal": 1,
    "assert_almost_equal": 1,
    "allclose": 1,
    "isclose": 1,
}
_WRAPPERS = {"tensor", "array", "asarray", "as_tensor", "float", "np.float64"}


def _literal(node: ast.AST | None, scopes: list[dict[str, ast.AST]]):
    """The Python value of a literal expression (a name bound to one, ``torch.tensor([...])``),
    via :func:`ast.literal_eval`; None when it is not a literal."""
    for _ in range(3):
        if isinstance(node, ast.Name):
            node = next((sc[node.id] for sc in scopes if node.id in sc), None)
        elif (
            isinstance(node, ast.Call)
            and len(node.args) == 1
            and _dotted(node.func).split(".")[-1] in _WRAPPERS
        ):
            node = node.args[0]
        else:
            break
    if node is None:
        return None
    try:
        v = ast.literal_eval(node)
    except (ValueError, SyntaxError, TypeError, MemoryError, RecursionError):
        return None
    return v


def _key_of(node: ast.AST | None, scopes: list[dict[str, ast.AST]]) -> str | None:
    """The metric name an actual-side expression selects: ``m["eval_loss"]``, ``m["loss"][-1]``,
    or a name bound to such a subscript."""
    for _ in range(3):
        if isinstance(node, ast.Name):
            node = next((sc[node.id] for sc in scopes if node.id in sc), None)
        elif isinstance(node, ast.Call) and len(node.args) == 1:
            node = node.args[0]
        else:
            break
    while isinstance(node, ast.Subscript):
        sl = node.slice
        if isinstance(sl, ast.Constant) and isinstance(sl.value, str):
            return sl.value
        node = node.value
    return None


def _num(x) -> bool:
    return isinstance(x, (int, float)) and not isinstance(x, bool)


def literal_goldens(ts: ModuleSource, fn: ast.AST) -> list:
    """Golden value sets written as literals in test ``fn`` of module ``ts`` (see the module
    docstring). Each set's source is ``path:line`` of the comparison.

    Returns:
        :class:`~.model.ValueSet` objects (role ``golden``, label ``literal``).
    """
    from .model import ValueSet

    mod_scope: dict[str, ast.AST] = {}
    for st in ts.tree.body:
        if _single_name_assign(st):
            mod_scope[st.targets[0].id] = st.value  # type: ignore[attr-defined]
    fn_scope: dict[str, ast.AST] = {}
    for fst in ast.walk(fn):
        if _single_name_assign(fst):
            fn_scope.setdefault(fst.targets[0].id, fst.value)  # type: ignore[attr-defined]
    scopes = [fn_scope, mod_scope]
    out = []
    for node in ast.walk(fn):
        for a_node, e_node in _expected_pairs(node):
            v = _literal(e_node, scopes)
            if v is None:
                continue
            vs = ValueSet(f"{ts.rel}:{getattr(node, 'lineno', 0)}", "golden", "literal")
            if isinstance(v, dict):
                for k, x in v.items():
                    _add_literal(vs, str(k), x)
            else:
                key = _key_of(a_node, scopes)
                if key is None:
                    continue
                _add_literal(vs, key, v)
            if vs.metrics:
                out.append(vs)
    return out


def _single_name_assign(st: ast.AST) -> bool:
    """``name = value``: one target, a plain name."""
    return (
        isinstance(st, ast.Assign) and len(st.targets) == 1 and isinstance(st.targets[0], ast.Name)
    )


def _expected_pairs(node: ast.AST) -> list[tuple[ast.AST | None, ast.AST | None]]:
    """(actual, expected) expressions a comparison node holds: ``x == approx(y)`` on either side,
    or a call of :data:`_EXPECTED_CALLS` whose expected value is its second argument."""
    pairs: list[tuple[ast.AST | None, ast.AST | None]] = []
    if isinstance(node, ast.Compare) and len(node.ops) == 1 and isinstance(node.ops[0], ast.Eq):
        left, right = node.left, node.comparators[0]
        for a_, e_ in ((left, right), (right, left)):
            if isinstance(e_, ast.Call) and _dotted(e_.func).split(".")[-1] == "approx" and e_.args:
                pairs.append((a_, e_.args[0]))
    elif isinstance(node, ast.Call):
        i = _EXPECTED_CALLS.get(_dotted(node.func).split(".")[-1])
        if i == 1 and len(node.args) >= 2:
            pairs.append((node.args[0], node.args[1]))
    return pairs


def _add_literal(vs, key: str, x) -> None:
    """A literal golden of metric ``key`` into ``vs``: a number at step 1, or a non-empty sequence
    of numbers at steps 1..n (an indexed metric); anything else is left out."""
    if _num(x):
        vs.metrics[key] = ([1], [float(x)])
    elif isinstance(x, (list, tuple)) and x and all(_num(y) for y in x):
        vs.metrics[key] = (list(range(1, len(x) + 1)), [float(y) for y in x])
        vs.indexed.append(key)
