"""Built-in detectors, one module per code, plus third-party ones from entry points.

Third-party detectors register through the ``mlaudit.detectors`` entry-point
group (the entry point names a module or class; importing it registers its
detectors). A plugin that fails to import is reported as a warning and skipped.
"""

from __future__ import annotations

import importlib
import pkgutil
import threading
import warnings
from importlib.metadata import entry_points

from .base import Detector, DetectorParams, Skip, detector_for, registry  # noqa: F401

_loaded = False
_lock = threading.RLock()  # re-entrant: a detector module may ask for the registry
PLUGIN_ERRORS: list[str] = []


def load_builtin_and_plugins() -> None:
    """Import every detector module once; thread-safe (audits run on worker threads)."""
    global _loaded
    if _loaded:
        return
    with _lock:
        if _loaded:
            return
        _import_all()
        _loaded = True  # only after every import finished: no thread sees half a registry


def _import_all() -> None:
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
