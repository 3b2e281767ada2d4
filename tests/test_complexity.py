"""Cyclomatic complexity of ``mlaudit_core`` (issue 29): no function or method above
:data:`MAX_COMPLEXITY`.

The figure is radon's (``radon cc``, the one docs/extending.md reports; radon is a ``dev``
dependency). ruff's C901 is no substitute: its McCabe count leaves the boolean operators out (4
functions above 25 by ruff where radon counted 13 at 4db2f9b).

The reading of radon's blocks (methods, nested functions) is checked on planted functions whose
figures radon 6.0.1 gives, so a walk that saw nothing could not pass.
"""

from __future__ import annotations

import textwrap
from pathlib import Path

from radon.complexity import cc_visit
from radon.visitors import Class

ROOT = Path(__file__).resolve().parent.parent
CORE = ROOT / "mlaudit_core"

#: The highest cyclomatic complexity a function of ``mlaudit_core`` may have (issue 29's "Done
#: when"; radon ranks 21-30 as D, "more than moderate").
MAX_COMPLEXITY = 25


def functions(source: str, prefix: str = "") -> list[tuple[str, int, int]]:
    """``(qualified name, line, complexity)`` of every function and method in ``source``, nested
    ones included (radon measures each on its own)."""
    out: list[tuple[str, int, int]] = []
    blocks = list(cc_visit(source))
    while blocks:
        b = blocks.pop()
        if isinstance(b, Class):
            blocks.extend(b.methods)
            blocks.extend(b.inner_classes)
            continue
        out.append((f"{prefix}{b.name}", b.lineno, b.complexity))
        blocks.extend(b.closures)
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
    got = {name: c for name, _, c in functions(textwrap.dedent(_PLANTED))}
    assert got == _RADON


def test_complexity_finds_a_planted_complex_function():
    body = "\n".join(f"    if x == {i}:\n        return {i}" for i in range(MAX_COMPLEXITY))
    [(name, _, c)] = functions(f"def many(x):\n{body}\n    return None\n")
    assert (name, c) == ("many", MAX_COMPLEXITY + 1)


def test_no_core_function_above_max_complexity():
    over = []
    seen = 0
    for path in sorted(CORE.rglob("*.py")):
        rel = path.relative_to(ROOT).as_posix()
        for name, line, c in functions(path.read_text(encoding="utf-8"), f"{rel}:"):
            seen += 1
            if c > MAX_COMPLEXITY:
                over.append(f"{name} (line {line}): {c}")
    assert seen > 1000, f"only {seen} functions found under {CORE}"
    assert not over, (
        f"functions above cyclomatic complexity {MAX_COMPLEXITY} (split them into named steps, "
        f"docs/extending.md): " + "; ".join(over)
    )
