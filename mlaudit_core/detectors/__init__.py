"""Built-in detectors, one module per code, plus third-party ones from entry points.

Third-party detectors register through the ``mlaudit.detectors`` entry-point
group (the entry point names a module or class; importing it registers its
detectors). A plugin that fails to import is reported as a warning and skipped.
"""

from __future__ import annotations

import importlib
import pkgutil
import warnings
from importlib.metadata import entry_points

from .base import Detector, DetectorParams, Skip, registry  # noqa: F401

_loaded = False
PLUGIN_ERRORS: list[str] = []


def load_builtin_and_plugins() -> None:
    global _loaded
    if _loaded:
        return
    _loaded = True
    for mod in pkgutil.iter_modules(__path__):
        if not mod.name.startswith("_") and mod.name != "base":
            importlib.import_module(f"{__name__}.{mod.name}")
    for ep in entry_points(group="mlaudit.detectors"):
        try:
            ep.load()
        except Exception as exc:  # a broken plugin warns, never crashes the host
            msg = f"detector plugin {ep.name!r} ({ep.value}) failed to load: {exc}"
            PLUGIN_ERRORS.append(msg)
            warnings.warn(msg, stacklevel=2)
