"""What ``pip install mlaudit`` (no extras) installs: pyproject's ``[project] dependencies`` and
everything they require in turn, resolved through the installed distributions' metadata
(``importlib.metadata``, markers evaluated for this interpreter, no extra selected).

The closure must hold no pandas, no scipy and no matplotlib (issue 30: they are the ``pandas``,
``dev`` and ``plots`` extras). This test needs no network and builds no venv: the versions it
walks are the test venv's, the ones pip resolves today. A real no-extras venv
(``python -m venv v && v/bin/pip install .``, about 1 minute, the index needed) held on
2026-12-06 exactly this closure (23 distributions) besides mlaudit, pip and setuptools. There,
``mlaudit PATH`` audited a run of every local format but two: TensorBoard event files and W&B run
folders need their SDK (``mlaudit[tensorboard]``, ``mlaudit[wandb]``; one error line naming the
extra, exit 2), as before issue 30. Every format without pandas and scipy:
tests/test_no_pandas.py.
"""

from __future__ import annotations

import importlib.metadata as md
import sys
from pathlib import Path

from packaging.requirements import Requirement
from packaging.utils import canonicalize_name

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - the test venv is 3.11+
    import tomli as tomllib

PYPROJECT = Path(__file__).resolve().parents[1] / "pyproject.toml"
#: Never pulled in by a plain install (issue 30).
HEAVY = {"pandas", "scipy", "matplotlib"}


def _applies(req: Requirement) -> bool:
    """True when ``req`` is installed without any extra on this interpreter."""
    return req.marker is None or req.marker.evaluate({"extra": ""})


def install_closure(roots: list[str]) -> dict[str, str]:
    """Distribution name -> the requirement that pulled it in, for ``roots`` and what they
    require (no extras). Raises ``PackageNotFoundError`` for a requirement not installed here."""
    seen: dict[str, str] = {}
    todo = [(Requirement(r), "pyproject") for r in roots]
    while todo:
        req, parent = todo.pop()
        name = canonicalize_name(req.name)
        if not _applies(req) or name in seen:
            continue
        seen[name] = parent
        for sub in md.requires(req.name) or []:
            todo.append((Requirement(sub), name))
    return seen


def test_a_plain_install_pulls_in_no_pandas_scipy_or_matplotlib():
    roots = tomllib.loads(PYPROJECT.read_text())["project"]["dependencies"]
    closure = install_closure(roots)
    assert {"numpy", "pydantic", "typer", "jinja2"} <= set(closure)
    assert not HEAVY & set(closure), {n: closure[n] for n in HEAVY & set(closure)}


def test_install_closure_follows_requirements_and_their_markers():
    # jinja2 requires MarkupSafe; MarkupSafe's own extras-free closure is itself
    closure = install_closure(["jinja2", "numpy; python_version < '3'"])
    assert closure["markupsafe"] == "jinja2" and "numpy" not in closure
    # an extra is not installed by a plain install: mlaudit[pandas]'s requirement is skipped
    assert install_closure(["pandas; extra == 'pandas'"]) == {}
