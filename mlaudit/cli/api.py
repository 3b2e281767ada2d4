"""What a plugin's commands build on: the stable surface of the ``mlaudit`` command line.

A tracker plugin contributes its commands through its ``cli`` member (``"module:function"``,
see :mod:`mlaudit_core.plugins`); the function receives the root ``typer.Typer`` and adds
its commands to it and to the shared groups below. Everything a built-in tracker's commands
use is here, so a third-party plugin needs nothing private (``docs/extending.md``)::

    from mlaudit.cli.api import FORMAT, OUT, FAIL_ON, CONFIG, run_pipeline, watch_app

Groups (``typer.Typer``): :data:`watch_app` (``mlaudit watch <tracker>``, with
:func:`run_watch` and :func:`watch_config`), :data:`batch_app` (``mlaudit batch <tracker>``,
with :func:`run_batch_cli`), :data:`serve_app` (``mlaudit serve <receiver>``, with
:func:`make_server`). Options shared by every run command: :data:`FORMAT`, :data:`OUT`,
:data:`FAIL_ON`, :data:`CONFIG`, :data:`DRY_RUN`, :data:`NO_WRITE`, :data:`VERBOSE`,
:data:`NOTIFY`; watch options are in :mod:`mlaudit.cli.cmd_watch` (``POLL_INTERVAL``,
``CONCURRENCY``, ``STATE``, ``SINCE``, ``ONCE``, ``LIVE``...), batch options in
:mod:`mlaudit.cli.cmd_batch` (``JOBS``, ``EXECUTOR``, ``STATE``, ``SINCE``...).

Importing this module imports no tracker SDK.
"""

from __future__ import annotations

from ._common import (
    CONFIG,
    DRY_RUN,
    FAIL_ON,
    FORMAT,
    NO_WRITE,
    NOTIFY,
    OUT,
    VERBOSE,
    FailOn,
    Format,
    err_console,
    fail,
    run_pipeline,
    settings_or_fail,
)
from .cmd_batch import batch_app, env_with_prefix, run_batch_cli
from .cmd_serve import DEFAULT_HEADER_TIMEOUT_S, DEFAULT_MAX_CONNECTIONS, make_server, serve_app
from .cmd_watch import live_options, run_watch, setup_logging, watch_app, watch_config, with_notify

__all__ = [
    "CONFIG",
    "DRY_RUN",
    "FAIL_ON",
    "FORMAT",
    "NO_WRITE",
    "NOTIFY",
    "OUT",
    "VERBOSE",
    "FailOn",
    "Format",
    "err_console",
    "fail",
    "run_pipeline",
    "settings_or_fail",
    "batch_app",
    "env_with_prefix",
    "run_batch_cli",
    "DEFAULT_HEADER_TIMEOUT_S",
    "DEFAULT_MAX_CONNECTIONS",
    "make_server",
    "serve_app",
    "live_options",
    "run_watch",
    "setup_logging",
    "watch_app",
    "watch_config",
    "with_notify",
]
