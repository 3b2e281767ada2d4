"""Tracker plugins, found through the ``mlaudit.trackers`` entry-point group.

A plugin implements :class:`TrackerPlugin`. Entry points name a class; importing
its module must not import the tracker SDK (the SDK is imported on first use,
and a missing SDK raises :class:`~mlaudit_core.errors.MissingDependency` with the
``pip install 'mlaudit[...]'`` line). A plugin that fails to load warns and is
left out, like MLflow's own plugin registry.

Optional member ``cli``: ``"module:function"`` naming the plugin's commands. The
``mlaudit`` command line (the application, :mod:`mlaudit.cli`, not this library) imports
that module at start-up and calls ``function(app)`` with its root ``typer.Typer``; the
function adds the plugin's run command (``mlaudit <tracker> RUN``) and its subcommands
of the shared groups (``mlaudit watch <tracker>``, ``batch <tracker>``, ``serve ...``;
:mod:`mlaudit.cli.api`). The module must not import the SDK either (``mlaudit --help``
imports none). A ``cli`` that fails to load or register warns and is left out.
Packages that add commands but no tracker (the demo) use the ``mlaudit.commands``
entry-point group, naming the same kind of ``register(app)`` function. The core never
names a plugin: everything tracker-specific reaches it through these entry points.
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

    def write_back(
        self, run: RunData, report: AuditReport, *, dry_run: bool = False, **options
    ) -> WriteBackResult:
        """Write the verdict onto the run, in mlaudit's namespace only; idempotent."""

    def list_finished(self, since: datetime | None = None, **options) -> list[str]:
        """Ids of runs that finished after ``since`` and carry no verdict yet (for watchers)."""

    # Optional (not checked by isinstance): ``cli: str`` -- "module:function" of the plugin's
    # commands, ``function(app: typer.Typer) -> None`` (module docstring); and
    # ``local_live_source(paths) -> (claimed paths, live source or None)`` for a tracker whose
    # runs are local files that ``mlaudit watch PATH --live`` can follow (TensorBoard).


def local_live_sources(paths: list) -> tuple[list, list]:
    """Live sources of the installed plugins for local ``paths`` (``mlaudit watch PATH
    --live``): each plugin with a ``local_live_source`` claims the paths it follows, in plugin
    name order. Returns ``(sources, paths no plugin claimed)``; a plugin that raises warns and
    claims nothing."""
    sources: list = []
    rest = list(paths)
    for name, cls in sorted(tracker_plugins().items()):
        fn = getattr(cls, "local_live_source", None)
        if fn is None or not rest:
            continue
        try:
            claimed, source = fn(rest)
        except Exception as exc:  # noqa: BLE001 - a broken plugin never breaks the host
            warnings.warn(f"tracker plugin {name!r}: local live source failed: {exc}", stacklevel=2)
            continue
        if claimed and source is not None:
            sources.append(source)
            rest = [p for p in rest if p not in claimed]
    return sources, rest


def load_object(spec: str):
    """The object ``"package.module:attr.path"`` names (the entry-point syntax; without
    ``:attr`` the module). Raises ImportError / AttributeError as importing would."""
    module, _, attr = spec.partition(":")
    obj = importlib.import_module(module.strip())
    for part in filter(None, attr.strip().split(".")):
        obj = getattr(obj, part)
    return obj


def command_registrars() -> list[tuple[str, object]]:
    """``(name, register)`` of every installed plugin's commands, by name: the ``cli`` member
    of each ``mlaudit.trackers`` plugin, then each ``mlaudit.commands`` entry point. A plugin
    whose commands fail to import warns and is left out (the host keeps working)."""
    out: list[tuple[str, object]] = []
    for name, cls in sorted(tracker_plugins().items()):
        spec = getattr(cls, "cli", None)
        if not spec:
            continue
        try:
            out.append((name, spec if callable(spec) else load_object(spec)))
        except Exception as exc:  # noqa: BLE001 - a broken plugin never breaks the host
            warnings.warn(
                f"tracker plugin {name!r}: its commands failed to load: {exc}", stacklevel=2
            )
    try:
        eps = sorted(entry_points(group="mlaudit.commands"), key=lambda e: e.name)
    except Exception:  # noqa: BLE001 - broken metadata never stops the built-in commands
        eps = []
    for ep in eps:
        try:
            out.append((ep.name, ep.load()))
        except Exception as exc:  # noqa: BLE001
            warnings.warn(f"command plugin {ep.name!r} failed to load: {exc}", stacklevel=2)
    return out


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
        raise InputError(
            f"no tracker plugin named {name!r} (installed: {', '.join(sorted(plugins))})"
        )
    return plugins[name](**kwargs)
