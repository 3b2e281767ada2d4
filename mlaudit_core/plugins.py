"""Tracker plugins, found through the ``mlaudit.trackers`` entry-point group.

A plugin implements :class:`TrackerPlugin`. Entry points name a class; importing
its module must not import the tracker SDK (the SDK is imported on first use,
and a missing SDK raises :class:`~mlaudit_core.errors.MissingDependency` with the
``pip install 'mlaudit[...]'`` line). A plugin that fails to load warns and is
left out, like MLflow's own plugin registry.
"""

from __future__ import annotations

import importlib
import warnings
from datetime import datetime
from importlib.metadata import entry_points
from typing import Protocol, runtime_checkable

from .errors import InputError, MissingDependency
from .report import AuditReport
from .rundata import RunData
from .writeback import WriteBackResult


@runtime_checkable
class TrackerPlugin(Protocol):
    name: str
    extra: str

    def load(self, ref: str, **options) -> RunData:
        """Load one run. Raises InputError for an unknown run, MissingDependency without the SDK."""

    def write_back(self, run: RunData, report: AuditReport, *, dry_run: bool = False,
                   **options) -> WriteBackResult:
        """Write the verdict onto the run, in mlaudit's namespace only; idempotent."""

    def list_finished(self, since: datetime | None = None, **options) -> list[str]:
        """Ids of runs that finished after ``since`` and carry no verdict yet (for watchers)."""


def require(module: str, package: str, extra: str):
    """Import a tracker SDK module or raise MissingDependency with the install hint."""
    try:
        return importlib.import_module(module)
    except ImportError:
        raise MissingDependency(package, extra) from None


def tracker_plugins() -> dict[str, type]:
    """Plugin classes by tracker name (entry points, loaded lazily)."""
    out: dict[str, type] = {}
    for ep in entry_points(group="mlaudit.trackers"):
        try:
            out[ep.name] = ep.load()
        except Exception as exc:  # broken plugin: warn, never crash the host
            warnings.warn(f"tracker plugin {ep.name!r} failed to load: {exc}", stacklevel=2)
    return out


def get_plugin(name: str, **kwargs) -> TrackerPlugin:
    plugins = tracker_plugins()
    if name not in plugins:
        raise InputError(f"no tracker plugin named {name!r} (installed: {', '.join(sorted(plugins))})")
    return plugins[name](**kwargs)
