"""The core's import graph (issue 22): ``mlaudit_core`` names no tracker plugin, no demo and
not the application; and its layers import only downwards.

The walk is static (``ast``) over every module of ``mlaudit_core``: every ``import`` and
``from ... import`` at any depth (lazy imports inside functions included), and, for the
plugin rule, every string that names a plugin or demo module the way a dynamic import would take it
(``importlib.import_module("mlaudit_mlflow.loader")``, an entry-point style
``"mlaudit_wandb.plugin:WandbPlugin"``, an f-string starting with one). Each rule is also run
on a planted module, so a checker that saw nothing could not pass.

Layers, lowest first (a module may import its own layer and the ones below):

0. foundations: _version, errors, roles, rundata, report, signal, signatures (and their sources), safeparse,
   redact, boundedio (bounded reads of regular files), plan (a run's planned length and the lines that
   say training ended normally), triage (what separates failing runs from the rest: plain data in,
   plain data out), sdk_private (the one adapter for private SDK members), _optional (optional
   packages such as pandas, None when absent), exception_causes (exception classes -> causes)
1. measurement libraries: formats (the console-log engine is formats.consolelog), baseline, ci,
   claims, evidence
2. detectors (they call the measurement libraries: ``ci.context``, ``baseline.compare``)
3. verdict, settings (settings validates detector codes and parameters)
4. orchestration, the one home of "audit a run / a CI job / a run with baselines or claims":
   ``mlaudit_core/audit.py``
5. delivery: render, writeback, notify, plugins, ci.github (the CI report for GitHub/Buildkite),
   ci.schema_out (the CI report shaped to a user's JSON Schema)
6. services: service (watch, batch), live, agent
7. the package root ``mlaudit_core/__init__.py`` (its facade re-exports ``audit``)

A name has one import path: no lower package forwards a name of a higher one (a module
``__getattr__`` importing upwards is an upward import like any other).
"""

from __future__ import annotations

import ast
import re
import textwrap
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
CORE = ROOT / "mlaudit_core"
#: Import packages the core must never name: the tracker plugins, the demo, the application.
FORBIDDEN = (
    "mlaudit_mlflow",
    "mlaudit_wandb",
    "mlaudit_clearml",
    "mlaudit_tensorboard",
    "mlaudit_demo",
    "mlaudit",
)
#: Of these, the names a dynamic import would spell out. ``mlaudit`` is also the namespace of
#: mlaudit's own tags and keys ("mlaudit.verdict"), so for the application only real import
#: statements count.
DYNAMIC = FORBIDDEN[:-1]
_NAMES = "|".join(re.escape(n) for n in DYNAMIC)
#: A string that an import function would take: "pkg", "pkg.mod", "pkg.mod:attr".
_MODULE_STRING = re.compile(rf"^\s*(?:{_NAMES})(?:\.\w+)*(?::[\w.]+)?\s*$")
_MODULE_PREFIX = re.compile(rf"^\s*(?:{_NAMES})(?:\.|:|$)")

LAYERS = {
    "_version": 0,
    "errors": 0,
    "roles": 0,
    "rundata": 0,
    "report": 0,
    "signal": 0,
    "signatures": 0,
    "signature_sources": 0,
    "safeparse": 0,
    "redact": 0,
    "boundedio": 0,
    "plan": 0,
    "triage": 0,
    "sdk_private": 0,
    "_optional": 0,
    "exception_causes": 0,
    "reference_gap": 0,
    "model_family": 0,  # which model family a run trains (tree ensembles), from its names
    "formats": 1,
    "baseline": 1,
    "ci": 1,
    "claims": 1,
    "evidence": 1,
    "ci.classify": 3,  # the CI verdict: its rows ask the detectors for their remedies (used by audit)
    "ci.github": 5,  # renders the CI report for GitHub/Buildkite (used by the command line)
    "ci.schema_out": 5,  # shapes the CI report to a user's JSON Schema (used by the command line)
    "detectors": 2,
    # the run's task metric: read by GE001/GE007 and the verdict; it asks detectors._context which
    # metric the run selects its checkpoint by
    "task_metric": 2,
    "verdict": 3,
    "settings": 3,
    "audit": 4,
    "render": 5,
    "writeback": 5,
    "notify": 5,
    "plugins": 5,
    "service": 6,
    "live": 6,
    "agent": 6,
    "": 7,  # the package root
}


def _module_name(path: Path, root: Path) -> list[str]:
    parts = list(path.relative_to(root.parent).with_suffix("").parts)
    return parts[:-1] if parts[-1] == "__init__" else parts


def _targets(node: ast.AST, path: Path, root: Path) -> list[str]:
    """Absolute dotted names an import statement reaches (``from . import x`` -> ``pkg.x``)."""
    if isinstance(node, ast.Import):
        return [a.name for a in node.names]
    if not isinstance(node, ast.ImportFrom):
        return []
    if node.level == 0:
        return [node.module or ""]
    here = _module_name(path, root)
    pkg = here if path.name == "__init__.py" else here[:-1]
    base = pkg[: len(pkg) - (node.level - 1)]
    if node.module:
        return [".".join([*base, node.module])]
    return [".".join([*base, a.name]) for a in node.names]


def plugin_references(
    path: Path, root: Path = CORE, forbidden: tuple[str, ...] = FORBIDDEN
) -> list[str]:
    """Every static import of a ``forbidden`` package, and every string naming a plugin or the
    demo as a module."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    docstrings = {
        id(n.body[0].value)
        for n in ast.walk(tree)
        if isinstance(n, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef))
        and n.body
        and isinstance(n.body[0], ast.Expr)
        and isinstance(n.body[0].value, ast.Constant)
    }
    out = []
    for node in ast.walk(tree):
        for t in _targets(node, path, root):
            if t.split(".")[0] in forbidden:
                out.append(f"{path.name}:{node.lineno}: imports {t}")
        if (
            isinstance(node, ast.Constant)
            and isinstance(node.value, str)
            and id(node) not in docstrings
            and _MODULE_STRING.match(node.value)
        ):
            out.append(f"{path.name}:{node.lineno}: names module {node.value!r}")
        if (
            isinstance(node, ast.JoinedStr)
            and node.values
            and isinstance(node.values[0], ast.Constant)
            and _MODULE_PREFIX.match(str(node.values[0].value))
        ):
            out.append(
                f"{path.name}:{node.lineno}: builds a module name from {node.values[0].value!r}"
            )
    return out


def layer_of(dotted: str) -> int | None:
    parts = dotted.split(".")
    if parts[0] != "mlaudit_core":
        return None
    if len(parts) > 2 and ".".join(parts[1:3]) in LAYERS:  # a module with its own layer
        return LAYERS[".".join(parts[1:3])]
    # a name of the root itself (``from .. import __version__``) is the root
    return LAYERS.get(parts[1], LAYERS[""]) if len(parts) > 1 else LAYERS[""]


def upward_imports(path: Path, root: Path = CORE) -> list[str]:
    """Imports from ``path``'s layer to a higher one, at any depth."""
    here = layer_of(".".join(_module_name(path, root)))
    assert here is not None, f"{path}: no layer; add its package to LAYERS"
    tree = ast.parse(path.read_text(encoding="utf-8"))
    out = []
    for node in ast.walk(tree):
        for t in _targets(node, path, root):
            there = layer_of(t)
            if there is not None and there > here:
                out.append(
                    f"{path.relative_to(root.parent)}:{node.lineno}: layer {here} "
                    f"imports {t} (layer {there})"
                )
    return out


def _core_modules():
    return sorted(CORE.rglob("*.py"))


def test_the_core_names_no_plugin_no_demo_and_not_the_application():
    problems = [p for path in _core_modules() for p in plugin_references(path)]
    assert not problems, "\n".join(problems)


def test_the_command_line_names_no_plugin_and_no_demo():
    """The application's command line (``mlaudit/cli``) gets every tracker command from the
    plugins' entry points: it names none of them either."""
    cli = ROOT / "mlaudit" / "cli"
    problems = [
        p
        for path in sorted(cli.rglob("*.py"))
        for p in plugin_references(path, cli, forbidden=DYNAMIC)
    ]
    assert not problems, "\n".join(problems)


def test_the_core_layers_import_only_downwards():
    problems = [p for path in _core_modules() for p in upward_imports(path)]
    assert not problems, "\n".join(problems)


def test_every_core_package_has_a_layer():
    tops = {
        p.name if p.is_dir() else p.stem
        for p in CORE.iterdir()
        if (p.is_dir() and (p / "__init__.py").is_file())
        or (p.suffix == ".py" and p.stem != "__init__")
    }
    assert tops <= set(LAYERS), sorted(tops - set(LAYERS))


def test_no_old_import_path_is_kept():
    """The package is unreleased: a moved module or name leaves nothing behind (no alias
    package, no module ``__getattr__`` answering for a name of another module)."""
    assert not (CORE / "logs").exists(), (
        "mlaudit_core/logs: the console-log engine is formats.consolelog"
    )
    for path in _core_modules():
        tree = ast.parse(path.read_text(encoding="utf-8"))
        assert not any(
            isinstance(n, ast.FunctionDef) and n.name == "__getattr__" for n in tree.body
        ), path


# --- the checkers see what they must --------------------------------------------------------------

PLANTED = '''
import importlib
from . import report


def lazy():
    from mlaudit_mlflow.loader import resolve_uri
    import mlaudit_demo.regimes
    importlib.import_module("mlaudit_wandb.offline")
    spec = "mlaudit_clearml.plugin:ClearMLPlugin"
    name = f"mlaudit_tensorboard.{'reader'}"
    from mlaudit.cli import app
    return resolve_uri, spec, name, app


def fine():
    """Docstrings may name ``mlaudit_mlflow.loader``; so may prose in a message."""
    return "see mlaudit_wandb for the W&B plugin", "mlaudit_core.formats"
'''


def test_the_plugin_check_catches_static_and_dynamic_references(tmp_path):
    pkg = tmp_path / "mlaudit_core"
    pkg.mkdir()
    (pkg / "planted.py").write_text(textwrap.dedent(PLANTED))
    found = plugin_references(pkg / "planted.py", pkg)
    joined = "\n".join(found)
    for needle in (
        "imports mlaudit_mlflow.loader",
        "imports mlaudit_demo.regimes",
        "'mlaudit_wandb.offline'",
        "'mlaudit_clearml.plugin:ClearMLPlugin'",
        "'mlaudit_tensorboard.'",
        "imports mlaudit.cli",
    ):
        assert needle in joined, (needle, found)
    assert len(found) == 6, found  # the docstring, the prose and mlaudit_core are not flagged


def test_the_layer_check_catches_an_upward_import_at_any_depth(tmp_path):
    pkg = tmp_path / "mlaudit_core"
    (pkg / "baseline").mkdir(parents=True)
    (pkg / "baseline" / "__init__.py").write_text(
        "from ..report import AuditReport\n\n\ndef f():\n    from ..audit import audit\n"
        "    from .. import __version__\n    return audit, __version__\n\n\n"
        "def __getattr__(name):\n    from ..audit import audit_with_baselines\n"
        "    return audit_with_baselines\n"
    )
    (pkg / "detectors").mkdir()
    (pkg / "detectors" / "XX001.py").write_text(
        "from ..ci.context import context_of\nfrom ..verdict import decide\n"
    )
    up = upward_imports(pkg / "baseline" / "__init__.py", pkg)
    assert len(up) == 3 and "imports mlaudit_core.audit (layer 4)" in up[0], up
    assert "imports mlaudit_core.__version__ (layer 7)" in up[1], up  # `from .. import x`: the root
    assert "__init__.py:11: layer 1 imports mlaudit_core.audit (layer 4)" in up[2], (
        up
    )  # in __getattr__
    up = upward_imports(pkg / "detectors" / "XX001.py", pkg)
    assert up == [
        "mlaudit_core/detectors/XX001.py:2: layer 2 imports mlaudit_core.verdict (layer 3)"
    ], up
