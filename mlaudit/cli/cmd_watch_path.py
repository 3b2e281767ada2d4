"""``mlaudit watch PATH... --live``: follow local runs while they are written.

PATH is a run: a TensorBoard log directory (event files: the TensorBoard plugin's live source),
a directory of CSV / console logs, a CSV file or a console log being appended
(:mod:`mlaudit_core.live.files`). ``mlaudit watch path PATH`` is the same command by name;
``mlaudit watch PATH`` reaches it when PATH is not a tracker's subcommand name (the ``watch``
group falls back to it for an existing path).
"""

from __future__ import annotations

from pathlib import Path

import typer

from . import cmd_watch as W
from ._common import CONFIG, NOTIFY, fail, settings_or_fail


def make_source(paths: list[Path]):
    """The live source for ``paths``: a path a tracker plugin follows (the TensorBoard plugin:
    log directories with event files; :func:`mlaudit_core.plugins.local_live_sources`) goes to
    that plugin's source, everything else to :class:`~mlaudit_core.live.files.LocalLiveSource`,
    inside a :class:`~mlaudit_core.live.files.CompositeSource` that offers those folders to the
    plugins again at each poll where something was created in them (a watcher started before
    the training wrote its first event file follows it from that poll on)."""
    from mlaudit_core.live.files import CompositeSource, LocalLiveSource
    from mlaudit_core.plugins import local_live_sources

    sources, rest = local_live_sources(paths)
    if not rest:
        return sources[0] if len(sources) == 1 else CompositeSource(sources)
    return CompositeSource(
        [*sources, LocalLiveSource(rest, exclusive=True)], claim=local_live_sources
    )


def watch_path(
    paths: list[Path] = typer.Argument(
        ...,
        metavar="PATH...",
        help="A run being written: a "
        "TensorBoard log directory, a directory of CSV/console "
        "logs, a CSV file or a console log; repeat for several.",
    ),
    live: bool = typer.Option(
        False,
        "--live",
        help="Follow the runs while they are written "
        "(required: a local log has no 'finished' state to watch for).",
    ),
    poll_interval: float = W.POLL_INTERVAL,
    state: Path = W.STATE,
    once: bool = W.ONCE,
    config: Path = CONFIG,
    notify: list[str] = NOTIFY,
    stop_on: str = W.STOP_ON,
    stall_floor: float = W.STALL_FLOOR,
    cooldown: float = W.COOLDOWN,
) -> None:
    """Follow local runs live: each poll reads what was appended since the last one (event
    files, CSV rows, console lines); alerts go to --notify and <run>/mlaudit/live.json."""

    if not live:
        fail("watch PATH needs --live (a local log has no end state to watch for)")
    for p in paths:
        if not p.exists():
            fail(f"{p}: no such file or directory")
    live_cfg = W.live_options(True, poll_interval, stop_on, stall_floor, cooldown)
    settings = W.with_notify(settings_or_fail(config), notify or [])
    W.setup_logging()
    resolved = sorted({p.resolve() for p in paths})
    source = make_source(resolved)
    scope = "local-live " + ",".join(str(p) for p in resolved)
    W.run_live_watch(
        source, scope, "local", state=state, settings=settings, live_cfg=live_cfg, once=once
    )


def _path_fallback_group():
    from typer.core import TyperGroup

    class PathFallbackGroup(TyperGroup):
        """``watch PATH ...``: a first argument that names no subcommand but an existing path
        runs ``watch path PATH ...``."""

        def resolve_command(self, ctx, args):
            if (
                args
                and args[0] not in self.commands
                and not args[0].startswith("-")
                and Path(args[0]).exists()
                and "path" in self.commands
            ):
                return "path", self.commands["path"], args
            return super().resolve_command(ctx, args)

    return PathFallbackGroup


def register(app: typer.Typer) -> None:
    W.watch_app.command("path")(watch_path)
    W.watch_app.info.cls = _path_fallback_group()
