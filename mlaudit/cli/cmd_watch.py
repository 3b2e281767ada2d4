"""``mlaudit watch <tracker>``: audit runs as they finish, and write the verdict back.

The ``watch`` sub-app is shared by every tracker; each tracker plugin adds its own
subcommand from its ``cli`` member (``mlaudit_wandb.cli`` adds ``watch wandb``,
``mlaudit_clearml.cli`` adds ``watch clearml``; :mod:`mlaudit_core.plugins`). A command
builds a :class:`~mlaudit_core.service.PluginSource` and calls :func:`run_watch`::

    from mlaudit.cli.api import watch_app, run_watch, watch_config
    from mlaudit.cli.cmd_watch import POLL_INTERVAL, ...

    @watch_app.command("wandb")
    def watch_wandb(project: str = ..., poll_interval: float = POLL_INTERVAL, ...):
        run_watch(lambda: WandbWatchSource(...), state=state, config=config,
                  watch=watch_config(poll_interval, concurrency, since, once))

(see docs/extending.md). SDKs are imported only when a command runs.
"""

from __future__ import annotations

import hashlib
import logging
import math
import sys
from collections.abc import Callable
from pathlib import Path

import typer

from ._common import fail, settings_or_fail

watch_app = typer.Typer(
    name="watch", no_args_is_help=True, help="Watch a tracker and audit runs as they end (polling)."
)

#: Longest ``--poll-interval``: one week, in seconds. Beyond it a watcher is not watching; and
#: the wait behind it overflows the platform's timeout (``threading.TIMEOUT_MAX``) near 9.2e9 s.
MAX_POLL_INTERVAL_S = 604800.0
#: Most runs audited at the same time (``--concurrency``, ``batch --jobs``). Each is a thread
#: with its own tracker connection and one run's metrics in memory, and the tracker is the
#: bottleneck (docs/automation.md: --jobs 4 is no faster than --jobs 1 on W&B or ClearML);
#: 100000 threads took 660 MB and 15 s before the thread limit failed them.
MAX_CONCURRENCY = 64


POLL_INTERVAL = typer.Option(
    30.0,
    "--poll-interval",
    min=0.1,
    max=MAX_POLL_INTERVAL_S,
    help="Seconds between listings (0.1 to 604800, one week).",
)
CONCURRENCY = typer.Option(
    2,
    "--concurrency",
    "-j",
    min=1,
    max=MAX_CONCURRENCY,
    help="Runs audited at the same time (1 to 64: each is a thread with "
    "its own tracker connection, and the tracker is the bottleneck).",
)
STATE = typer.Option(
    None,
    "--state",
    help="State file (sqlite; default ./.mlaudit/watch-<tracker>-<scope hash>.sqlite).",
)
SINCE = typer.Option(
    None,
    "--since",
    help="On a new state file, also audit runs that finished after this "
    "date/ISO time ('all': every run without a verdict); default: from "
    "now on.",
)
ONCE = typer.Option(False, "--once", help="List once, audit everything ready, exit (for cron).")
LIVE = typer.Option(
    False,
    "--live",
    help="Also follow RUNNING runs: read only what is new each "
    "poll, alert once per episode (NaN, divergence, stall...); see docs/live.md.",
)
STOP_ON = typer.Option(
    None,
    "--stop-on",
    help="With --live: request a stop on these live findings "
    "(comma-separated: nan, diverged, loss_scale, stalled, throughput, console). "
    "Off by default.",
)
STALL_FLOOR = typer.Option(
    600.0,
    "--stall-floor",
    min=1.0,
    help="With --live: shortest stall reported, seconds (default 600: PyTorch's NCCL timeout).",
)
COOLDOWN = typer.Option(
    300.0,
    "--cooldown",
    min=0.0,
    help="With --live: seconds after an episode "
    "clears during which the same condition is not alerted again.",
)


def register(app: typer.Typer) -> None:
    app.add_typer(watch_app, name="watch")


def watch_config(poll_interval: float, concurrency: int, since: str | None, once: bool):
    """The :class:`~mlaudit_core.service.WatchConfig` of the shared options.

    Exit 2 (one line) on a bad or future ``--since`` date, a ``poll_interval`` (seconds) that
    is not a finite number in 0.1..:data:`MAX_POLL_INTERVAL_S`, or a ``concurrency`` outside
    1..:data:`MAX_CONCURRENCY` (the options check this; values that reach here another way,
    e.g. a hidden old option name, are checked again).
    """
    from mlaudit_core.errors import InputError
    from mlaudit_core.service import WatchConfig, parse_since

    if not (math.isfinite(poll_interval) and 0.1 <= poll_interval <= MAX_POLL_INTERVAL_S):
        fail(
            f"--poll-interval {poll_interval:g}: must be a finite number of seconds from 0.1 to "
            f"{MAX_POLL_INTERVAL_S:g} (one week)"
        )
    if not 1 <= concurrency <= MAX_CONCURRENCY:
        fail(f"--concurrency {concurrency}: must be from 1 to {MAX_CONCURRENCY}")
    try:
        since_dt = parse_since(since)
    except InputError as exc:
        fail(str(exc))
    return WatchConfig(
        poll_interval_s=poll_interval, concurrency=concurrency, since=since_dt, once=once
    )


def setup_logging() -> None:
    """One line per event on stderr: ``<time> <LEVEL> <message>`` (logger ``mlaudit``)."""
    logger = logging.getLogger("mlaudit")
    if not any(getattr(h, "_mlaudit", False) for h in logger.handlers):
        from mlaudit_core.redact import neutralise_controls

        class _Plain(logging.Formatter):  # run names, model names, tracker errors: run content
            def format(self, record: logging.LogRecord) -> str:
                return neutralise_controls(super().format(record))

        h = logging.StreamHandler(sys.stderr)
        h.setFormatter(_Plain("%(asctime)s %(levelname)s %(message)s"))
        h._mlaudit = True  # type: ignore[attr-defined]
        logger.addHandler(h)
    logger.setLevel(logging.INFO)


def live_options(
    live: bool, poll_interval: float, stop_on: str | None, stall_floor: float, cooldown: float
):
    """The :class:`~mlaudit_core.live.LiveConfig` of ``--live`` (None without it); exit 2 on an
    unknown ``--stop-on`` name or ``--stop-on`` without ``--live``."""
    if not live:
        if stop_on:
            fail("--stop-on needs --live")
        return None
    from mlaudit_core.live.cli import live_config

    try:
        return live_config(poll_interval, stop_on, stall_floor, cooldown)
    except ValueError as exc:
        fail(f"--stop-on: {exc}")


def run_watch(
    make_source: Callable,
    *,
    state: Path | None,
    config: Path | None,
    watch,
    notify: list[str] | None = None,
    serve: Callable | None = None,
    live: tuple[Callable, object] | None = None,
) -> None:
    """Build the source, open the state file and watch until SIGTERM/SIGINT; exits 0.

    With ``--once``: exit 4 (``EXIT_INCOMPLETE``, one line) when the tracker did not answer
    the listing within ``once_listing_attempts``, or when runs failed and wait for a retry.

    ``make_source()`` returns a :class:`~mlaudit_core.service.PluginSource`. A configuration
    problem (unknown experiment, missing SDK, state file in use or of another scope) is one
    line on stderr and exit 2; tracker outages are retried, never fatal. ``notify``: webhook
    URLs each written verdict is posted to, with ``[tool.mlaudit.notify]`` (a command's
    ``--notify``; see docs/notifications.md). ``serve(watcher)``, when given, runs instead of
    ``watcher.run()`` in the main thread (a webhook receiver that runs the watcher in a
    thread, submits pushed runs, and stops it on exit). ``live``: ``(make_live_source(source),
    LiveConfig)`` to also follow running runs in a thread (``--live``, docs/live.md).
    """
    from mlaudit_core.errors import EXIT_INCOMPLETE, MlauditError, TrackerUnavailable
    from mlaudit_core.redact import redact_text
    from mlaudit_core.service import StateStore, Watcher, default_state_path

    settings = settings_or_fail(config)
    settings = with_notify(settings, notify or [])
    setup_logging()
    try:
        if state is not None:  # a bad --state fails before the tracker is asked anything
            from mlaudit_core.service.state import check_state_file

            check_state_file(state)
        source = make_source()
        source.scope = redact_text(source.scope)
        digest = hashlib.sha1(source.scope.encode()).hexdigest()[:8]
        path = state or default_state_path("watch", source.tracker, digest)
        with StateStore(path, source.scope) as store:
            watcher = Watcher(source, store, settings, watch)
            monitor = None
            if live is not None:
                from mlaudit_core.live.cli import MonitorThread

                monitor = MonitorThread(
                    live[0](source), store, settings, live[1], once=watch.once
                ).start()
            try:
                if serve is None:
                    code = watcher.run()
                else:
                    serve(watcher)
                    code = 0
            finally:
                if monitor is not None:
                    monitor.stop()
    except TrackerUnavailable as exc:  # --once: the tracker did not answer within the budget
        fail(str(exc), code=EXIT_INCOMPLETE)
    except MlauditError as exc:
        fail(str(exc))
    raise typer.Exit(code)


def run_live_watch(
    source, scope: str, kind: str, *, state: Path | None, settings, live_cfg, once: bool
) -> None:
    """Follow ``source`` live with no watcher of finished runs (``watch tensorboard --live``,
    ``watch PATH --live``): the state file is ``state`` (checked first) or the default one of
    ``watch <kind>`` for ``scope``; exit 2 on a bad state file or an :class:`MlauditError`,
    else :class:`typer.Exit` with the monitor's code."""
    from mlaudit_core.errors import MlauditError
    from mlaudit_core.live.cli import run_live_only
    from mlaudit_core.service import StateStore, default_state_path

    digest = hashlib.sha1(scope.encode()).hexdigest()[:8]
    try:
        if state is not None:
            from mlaudit_core.service.state import check_state_file

            check_state_file(state)
        with StateStore(state or default_state_path("watch", kind, digest), scope) as st:
            code = run_live_only(source, st, settings, live_cfg, once=once)
    except MlauditError as exc:
        fail(str(exc))
    raise typer.Exit(code)


def with_notify(settings, urls: list[str]):
    """``settings`` with ``urls`` added to ``[tool.mlaudit.notify]``; exit 2 on a bad notify table."""
    from mlaudit_core.notify import notify_config
    from mlaudit_core.settings import SettingsError

    try:
        notify_config(settings.notify, urls, source=settings.source)
    except SettingsError as exc:
        fail(str(exc))
    if not urls:
        return settings
    table = dict(settings.notify)
    table["urls"] = [*table.get("urls", []), *urls]
    return settings.model_copy(update={"notify": table})
