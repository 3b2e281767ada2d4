"""The one version string: pyproject.toml's, as installed (a layer-0 module, so any layer may
import it without importing the package root)."""

from __future__ import annotations

from importlib.metadata import PackageNotFoundError
from importlib.metadata import version as _dist_version

try:
    __version__ = _dist_version("mlaudit")
except PackageNotFoundError:  # pragma: no cover - a source tree that was never installed
    __version__ = "0+unknown"
