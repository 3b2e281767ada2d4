"""Cyclomatic complexity of ``mlaudit_core`` (issue 29): no function or method above
:data:`MAX_COMPLEXITY`.

The figure is radon's (``radon cc``, the one docs/extending.md reports), computed here with the
standard library's ``ast`` because radon is not a dependency: a function starts at 1 and adds 1
per ``if`` / conditional expression / ``assert``, 1 per ``for`` / ``while`` (and 1 more for its
``else``), the number of handlers of a ``try`` (and 1 for its ``else``), one less than the operands
of each ``and`` / ``or``, 1 per comprehension ``for`` plus its ``if`` clauses, and the cases of a
``match`` other than ``case _``. A nested function or class is measured on its own, not inside its
parent (radon's rules, radon/visitors.py ``ComplexityVisitor``). ruff's C901 is no substitute: its
McCabe count leaves the boolean operators out (4 functions above 25 by ruff where radon counted 13
at 4db2f9b).

The counter is checked on planted functions whose radon figures were measured with radon 6.0.1,
so a counter that saw nothing could not pass.
"""

from __future__ import annotations

import ast
import textwrap
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
CORE = ROOT / "mlaudit_core"

#: The highest cyclomatic complexity a function of ``mlaudit_core`` may have (issue 29's "Done
#: when"; radon ranks 21-30 as D, "more than moderate").
MAX_COMPLEXITY = 25

_SCOPES = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)


def complexity(fn: ast.FunctionDef | ast.AsyncFunctionDef) -> int:
    """radon's cyclomatic complexity of one function (its body; nested functions and classes
    excluded, decorators and default values not counted)."""
    total = 1
    stack: list[ast.AST] = list(fn.body)
    while stack:
        node = stack.pop()
        if isinstance(node, _SCOPES):
            continue
        if isinstance(node, ast.Assert):
            total += 1
            continue  # radon does not look inside an assert
        if isinstance(node, ast.Try):
            total += len(node.handlers) + bool(node.orelse)
        elif isinstance(node, ast.BoolOp):
            total += len(node.values) - 1
        elif isinstance(node, (ast.If, ast.IfExp)):
            total += 1
        elif isinstance(node, ast.Match):
            wildcard = any(getattr(case.pattern, "pattern", False) is None for case in node.cases)
            total += max(0, len(node.cases) - wildcard)
        elif isinstance(node, (ast.For, ast.While, ast.AsyncFor)):
            total += 1 + bool(node.orelse)
        elif isinstance(node, ast.comprehension):
            total += 1 + len(node.ifs)
        stack.extend(ast.iter_child_nodes(node))
    return total


def functions(tree: ast.AST, prefix: str = "") -> list[tuple[str, int, int]]:
    """``(qualified name, line, complexity)`` of every function and method in ``tree``, nested
    ones included."""
    out: list[tuple[str, int, int]] = []
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            out.append((f"{prefix}{node.name}", node.lineno, complexity(node)))
    return out


_PLANTED = """
def plain(x):
    return x

def branches(x, y):
    if x and y or x:
        return 1
    elif x:
        return 2
    for i in range(3):
        pass
    else:
        pass
    while x:
        x -= 1
    try:
        pass
    except ValueError:
        pass
    except KeyError:
        pass
    else:
        pass
    assert x and y
    return [i for i in range(3) if i if i > 1] and (1 if x else 2)

def matcher(x):
    match x:
        case 1:
            return 1
        case 2:
            return 2
        case _:
            return 3

def outer(x):
    def inner(y):
        if y:
            return 1
        return 2
    if x:
        return inner
    return None

class Box:
    def method(self, x):
        return x or self or None
"""

#: radon 6.0.1 ``radon cc -s`` on :data:`_PLANTED`
_RADON = {"plain": 1, "branches": 17, "matcher": 3, "outer": 2, "inner": 2, "method": 3}


def test_complexity_counts_as_radon_does():
    got = {name: c for name, _, c in functions(ast.parse(textwrap.dedent(_PLANTED)))}
    assert got == _RADON


def test_complexity_finds_a_planted_complex_function():
    body = "\n".join(f"    if x == {i}:\n        return {i}" for i in range(MAX_COMPLEXITY))
    tree = ast.parse(f"def many(x):\n{body}\n    return None\n")
    [(name, _, c)] = functions(tree)
    assert (name, c) == ("many", MAX_COMPLEXITY + 1)


def test_no_core_function_above_max_complexity():
    over = []
    seen = 0
    for path in sorted(CORE.rglob("*.py")):
        rel = path.relative_to(ROOT).as_posix()
        for name, line, c in functions(ast.parse(path.read_text(encoding="utf-8")), f"{rel}:"):
            seen += 1
            if c > MAX_COMPLEXITY:
                over.append(f"{name} (line {line}): {c}")
    assert seen > 1000, f"only {seen} functions found under {CORE}"
    assert not over, (
        f"functions above cyclomatic complexity {MAX_COMPLEXITY} (split them into named steps, "
        f"docs/extending.md): " + "; ".join(over)
    )
