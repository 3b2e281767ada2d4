"""Packaging (issue 16, finding 12): every third-party import of every module is declared in
pyproject.toml, in the core dependencies or in the extra the module belongs to; the version
string is written once (pyproject.toml, read back through importlib.metadata).

The walk is static (``ast``): every ``import`` and ``from ... import`` at any depth, lazy
imports inside functions included, and every ``require(module, package, extra)`` call (the
SDK loader that names its extra). An import inside ``try: ... except ImportError`` is an
optional feature and exempt. Import names are mapped to distributions with
``importlib.metadata.packages_distributions()`` of this environment (``.[all,dev]``).
The fresh-venv side (``pip install '.[wandb]'`` alone runs the receiver, ``'.[mlflow]'
mlflow==2.22.0`` audits a run) is checked by ``.ci/run``'s second venv.
"""

from __future__ import annotations

import ast
import re
import sys
from importlib.metadata import packages_distributions, version
from pathlib import Path

import pytest

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

ROOT = Path(__file__).resolve().parent.parent
PYPROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text())
PACKAGES = [
    ROOT / "mlaudit_core",
    ROOT / "mlaudit",
    *sorted((ROOT / "integrations").glob("mlaudit_*")),
]

#: The extras a module may import from besides the core dependencies (path prefix -> extras).
#: Longest prefix wins.
MODULE_EXTRAS = {
    "integrations/mlaudit_mlflow": {"mlflow"},
    "integrations/mlaudit_wandb": {"wandb"},
    "integrations/mlaudit_clearml": {"clearml"},
    "integrations/mlaudit_tensorboard": {"tensorboard"},
    "integrations/mlaudit_demo": {"examples", "mlflow", "tensorboard"},
    "mlaudit_core/render/plots.py": {"plots"},
    "mlaudit_core/ci/schema_out.py": {"ci"},
    "mlaudit/cli/cmd_serve.py": {"serve"},
    "integrations/mlaudit_mlflow/registry_webhook.py": {"mlflow", "serve"},
    "integrations/mlaudit_mlflow/cli_webhook.py": {"mlflow", "serve"},
    "mlaudit_core/service/batch.py": {"ray"},
    "mlaudit_core/agent": {"mcp"},
    # the in-process hooks run inside the user's training, with whichever tracker it uses
    "mlaudit/hooks.py": {"mlflow", "wandb", "frameworks"},
}


def _norm(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def _req_name(req: str) -> str:
    return _norm(re.match(r"\s*([A-Za-z0-9._-]+)", req).group(1))


def _extra_dists(extra: str, seen: frozenset = frozenset()) -> set[str]:
    out: set[str] = set()
    for req in PYPROJECT["project"]["optional-dependencies"].get(extra, []):
        m = re.match(r"\s*mlaudit\[([^\]]+)\]", req)
        if m:
            for e in m.group(1).split(","):
                if e.strip() not in seen:
                    out |= _extra_dists(e.strip(), seen | {extra})
        else:
            out.add(_req_name(req))
    return out


CORE = {_req_name(r) for r in PYPROJECT["project"]["dependencies"]}


def _extras_of(rel: str) -> set[str]:
    best = ""
    for prefix in MODULE_EXTRAS:
        if (rel == prefix or rel.startswith(prefix.rstrip("/") + "/")) and len(prefix) > len(best):
            best = prefix
    return MODULE_EXTRAS.get(best, set())


def _optional(node: ast.AST, parents: dict) -> bool:
    """Inside ``try:`` whose handlers catch ImportError / ModuleNotFoundError, or under
    ``if TYPE_CHECKING:`` (never imported at run time)."""
    cur = node
    while cur in parents:
        par = parents[cur]
        if (
            isinstance(par, ast.If)
            and cur in par.body
            and (
                (isinstance(par.test, ast.Name) and par.test.id == "TYPE_CHECKING")
                or (isinstance(par.test, ast.Attribute) and par.test.attr == "TYPE_CHECKING")
            )
        ):
            return True
        if isinstance(par, ast.Try) and cur in par.body:
            for h in par.handlers:
                names = [h.type] if not isinstance(h.type, ast.Tuple) else list(h.type.elts)
                if any(
                    isinstance(n, ast.Name)
                    and n.id in ("ImportError", "ModuleNotFoundError", "Exception")
                    for n in names
                ):
                    return True
        cur = par
    return False


def _imports(path: Path):
    """(line, top-level import name) and (line, require package, require extra) of a module."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    parents = {c: p for p in ast.walk(tree) for c in ast.iter_child_nodes(p)}
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names = [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            names = [node.module]
        elif (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Name)
            and node.func.id == "require"
            and len(node.args) == 3
            and all(isinstance(a, ast.Constant) for a in node.args)
        ):
            yield node.lineno, None, (node.args[1].value, node.args[2].value)
            continue
        else:
            continue
        if _optional(node, parents):
            continue
        for n in names:
            yield node.lineno, n.split(".")[0], None


def _modules():
    for pkg in PACKAGES:
        yield from sorted(pkg.rglob("*.py"))


def test_every_third_party_import_is_declared_where_the_module_belongs():
    std = set(sys.stdlib_module_names) | {"__future__"}
    own = {p.name for p in PACKAGES}
    dists = packages_distributions()
    problems = []
    for path in _modules():
        rel = path.relative_to(ROOT).as_posix()
        extras = _extras_of(rel)
        allowed = set(CORE)
        for e in extras:
            allowed |= _extra_dists(e)
        for line, name, req in _imports(path):
            if req is not None:
                package, extra = req
                if _norm(package) not in _extra_dists(extra):
                    problems.append(
                        f"{rel}:{line}: require(..., {package!r}, {extra!r}): "
                        f"{package} is not in the [{extra}] extra"
                    )
                continue
            if name in std or name in own or name.startswith("mlaudit"):
                continue
            candidates = {_norm(d) for d in dists.get(name, [])} or {_norm(name)} & allowed
            if not candidates:  # (a declared one may be absent here: tomli on Python >= 3.11)
                problems.append(
                    f"{rel}:{line}: imports {name}, which no installed distribution "
                    "provides (declare it, or guard the import with ImportError)"
                )
            elif not candidates & allowed:
                where = "core dependencies" + (f" or extras {sorted(extras)}" if extras else "")
                problems.append(
                    f"{rel}:{line}: imports {name} ({'/'.join(sorted(candidates))}), "
                    f"not declared in the {where}"
                )
    assert not problems, "\n".join(problems)


def test_the_walk_sees_lazy_imports():
    """The check would catch the finding's case: uvicorn imported inside a function of the
    receiver command, declared only through mlflow before."""
    found = {name for _, name, _ in _imports(ROOT / "integrations" / "mlaudit_wandb" / "cli.py")}
    serve = {name for _, name, _ in _imports(ROOT / "mlaudit" / "cli" / "cmd_serve.py")}
    assert "uvicorn" in found | serve
    assert {"uvicorn", "starlette"} <= _extra_dists("wandb")
    assert "jsonschema" in _extra_dists("ci") and "jsonschema" in _extra_dists("all")


@pytest.mark.parametrize(
    "extra,dist,oldest",
    [("mlflow", "mlflow", "2.16"), ("wandb", "wandb", "0.22"), ("clearml", "clearml", "1.16")],
)
def test_tracker_ranges_accept_what_users_run(extra, dist, oldest):
    (req,) = [
        r for r in PYPROJECT["project"]["optional-dependencies"][extra] if _req_name(r) == dist
    ]
    assert f">={oldest}" in req.replace(" ", ""), req


def test_one_version_string():
    import mlaudit_core

    assert mlaudit_core.__version__ == version("mlaudit") == PYPROJECT["project"]["version"]
    literal = re.compile(r"""__version__\s*=\s*["']\d+\.\d+""")  # a hard-coded release
    offenders = [
        p.relative_to(ROOT).as_posix() for p in _modules() if literal.search(p.read_text())
    ]
    assert not offenders, offenders


def test_ci_tests_the_oldest_supported_tracker_versions():
    """.ci/run's second venv pins exactly the lower bounds of the mlflow and wandb extras."""
    ci = (ROOT / ".ci" / "run").read_text()
    for extra, var in (("mlflow", "OLDEST_MLFLOW"), ("wandb", "OLDEST_WANDB")):
        (req,) = [
            r for r in PYPROJECT["project"]["optional-dependencies"][extra] if _req_name(r) == extra
        ]
        low = re.search(r">=\s*([0-9.]+)", req).group(1)
        pinned = re.search(rf"^\s*{var}=([0-9.]+)$", ci, re.MULTILINE).group(1)
        assert pinned.split(".")[:2] == low.split(".")[:2], (extra, pinned, low)
