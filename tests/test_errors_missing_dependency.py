"""``MissingDependency`` (mlaudit_core/errors.py) gives an install line that works where mlaudit runs
from: ``pip install 'mlaudit[extra]'`` for an installed package, and the editable install of the
clone (the README's Quickstart) when mlaudit runs from a source checkout, as these tests do."""

from __future__ import annotations

from pathlib import Path

import mlaudit_core
from mlaudit_core.errors import MissingDependency


def test_missing_dependency_names_the_editable_install_in_a_source_checkout():
    root = Path(mlaudit_core.__file__).resolve().parent.parent
    assert (root / "pyproject.toml").is_file()
    msg = str(MissingDependency("wandb", "wandb"))
    assert "pip install 'mlaudit[wandb]'" in msg, msg
    assert f"pip install -e '{root}[wandb]'" in msg, msg
