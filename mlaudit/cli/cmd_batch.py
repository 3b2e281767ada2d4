"""``mlaudit batch <tracker>``: audit every run of an experiment, with a summary at the end.

The ``batch`` sub-app is shared by every tracker. A tracker plugin adds its subcommand
from its ``cli`` member (:mod:`mlaudit_core.plugins`) by registering a command on
:data:`batch_app` that lists its runs and calls :func:`run_batch_cli` (see
docs/extending.md)::

    from mlaudit.cli.api import batch_app, run_batch_cli
    from mlaudit.cli.cmd_batch import JOBS, EXECUTOR, ...

Exit 0 once the summary is printed, even when some runs could not be read (they are
listed with the reason); exit 2 for bad input (unknown experiment, bad or future date,
state file in use or unusable, a ``--ray-address`` that does not accept a connection),
before anything is written.
"""

from __future__ import annotations

import os
import socket
import sys
from collections.abc import Callable
from pathlib import Path

import typer
from rich.console import Console

from ._common import err_console, fail
from .cmd_watch import MAX_CONCURRENCY

batch_app = typer.Typer(
    name="batch",
    no_args_is_help=True,
    help="Audit every run of an experiment; resumable, with a summary.",
)


SINCE = typer.Option(
    None,
    "--since",
    help="Only runs that ended after this date or ISO time (local time unless it has an offset).",
)
JOBS = typer.Option(
    None,
    "--jobs",
    "-j",
    min=1,
    max=MAX_CONCURRENCY,
    help="Runs audited at the same time, 1 to 64 (local threads; with a local "
    "Ray: its CPUs). Default 1 / all CPUs. Each is a tracker connection, "
    "and the tracker is the bottleneck.",
)
EXECUTOR = typer.Option("local", "--executor", help="local (threads) or ray.")
RAY_ADDRESS = typer.Option(
    None,
    "--ray-address",
    envvar="RAY_ADDRESS",
    help="Ray cluster address (default: start a local Ray).",
)
STATE = typer.Option(
    None,
    "--state",
    help="State file (sqlite) that makes the batch resumable "
    "(default ./.mlaudit/batch-<tracker>-<experiment>.sqlite).",
)
FRESH = typer.Option(
    False, "--fresh", help="Forget earlier results in the state file; audit every run again."
)
WORST = typer.Option(10, "--worst", min=0, help="How many of the worst runs the summary lists.")
FORMAT = typer.Option(
    "table",
    "--format",
    "-f",
    help="table (for people), or one row per run for scripts: json, csv, "
    "markdown (columns id, name, status, outcome, cause, confidence, "
    "codes, error, url; docs/automation.md).",
)
TRIAGE = typer.Option(
    False,
    "--triage",
    help="After the audits, test what separates the failing runs (params, tags, "
    "commit, host, start time), find the first bad / last good run and judge "
    "the best run against seed noise; written back unless --no-write "
    "(docs/triage.md).",
)


def register(app: typer.Typer) -> None:
    app.add_typer(batch_app, name="batch")


#: Seconds ``--ray-address`` has to accept a TCP connection (``ray.init`` itself retries an
#: unreachable address for minutes).
RAY_CONNECT_TIMEOUT_S = 5.0


def check_ray_address(address: str | None, timeout: float = RAY_CONNECT_TIMEOUT_S) -> None:
    """Exit 2 (one line) unless the Ray cluster at ``address`` accepts a TCP connection.

    ``address``: ``host:port`` (a GCS address) or ``ray://host:port`` (Ray Client);
    None, ``auto`` and ``local`` (Ray finds or starts the cluster itself) and other
    schemes are not checked. ``timeout``: seconds for the connection. Called before any
    state file is made: ``ray.init`` on an address nobody answers retries its GCS
    connection for minutes.
    """
    from urllib.parse import urlsplit

    if address is None or address.strip().lower() in ("", "auto", "local"):
        return
    text = address.strip()
    scheme, _, rest = text.rpartition("://")
    if scheme not in ("", "ray"):
        return
    try:
        parts = urlsplit(f"//{rest}")
        host, port = parts.hostname, parts.port
    except ValueError:  # a port that is not a number from 0 to 65535
        fail(f"--ray-address {address!r}: the port is not a number from 0 to 65535")
    if not host or port is None:
        fail(f"--ray-address {address}: not host:port, ray://host:port, auto or local")
    try:
        socket.create_connection((host, port), timeout=timeout).close()
    except TimeoutError:
        fail(f"--ray-address {address}: cannot connect (no answer within {timeout:g} s)")
    except socket.gaierror as exc:
        fail(f"--ray-address {address}: cannot connect (unknown host {host}: {exc.strerror})")
    except OSError as exc:
        fail(f"--ray-address {address}: cannot connect ({exc.strerror or type(exc).__name__})")


def run_batch_cli(
    prepare: Callable[[], tuple],
    *,
    title: str,
    tracker: str,
    name: str,
    state: Path | None = None,
    jobs: int | None = None,
    executor: str = "local",
    ray_address: str | None = None,
    fresh: bool = False,
    worst: int = 10,
    fmt: str = "table",
    triage: Callable[[list], tuple] | None = None,
) -> None:
    """List the runs, audit them with a progress bar, print the summary; exits 0.

    ``fmt``: ``table`` prints the Rich summary (never wrapped or cut when stdout is not a
    terminal: a pipe or file gets each table row on one line); ``json``, ``csv`` and
    ``markdown`` print one row per run to stdout (:mod:`.batch_formats`) and nothing else
    there (progress and the retry hint go to stderr).

    ``prepare()`` returns ``(refs, spec, scope)``: the run references, the
    :class:`~mlaudit_core.service.TaskSpec` and the one-line scope stored in the state
    file. An ``MlauditError`` there is one line and exit 2; any other exception (the
    tracker is unreachable) too, naming the tracker.

    ``triage`` (``--triage``): called with the batch's results once they are all in, returns
    ``(Triage, where)`` (:mod:`mlaudit_core.triage`; ``where``: what it wrote back, or None).
    Its text follows the table (``table``), goes into the JSON document as ``triage``
    (``json``; where it was written back goes to stderr), or to stderr (``csv``, ``markdown``).
    A triage that fails is one line on
    stderr; the batch's exit code stands.
    """
    from rich.progress import (
        BarColumn,
        MofNCompleteColumn,
        Progress,
        TextColumn,
        TimeRemainingColumn,
    )

    from mlaudit_core.errors import MlauditError
    from mlaudit_core.redact import redact_text
    from mlaudit_core.service import (
        BatchSummary,
        Executor,
        StateStore,
        default_state_path,
        run_batch,
    )
    from mlaudit_core.service.state import check_state_file
    from mlaudit_core.service.task import one_line

    from .batch_formats import FORMATS

    if fmt not in FORMATS:
        fail(f"--format {fmt!r}: use one of {', '.join(FORMATS)}")
    try:
        mode = Executor(executor)
    except ValueError:
        fail(f"--executor {executor!r}: use 'local' or 'ray'")
    if mode is Executor.ray:  # an unreachable cluster fails now, not after minutes in ray.init
        check_ray_address(ray_address)
    try:
        if state is not None:  # a bad --state fails before the tracker is asked anything
            check_state_file(state)
        refs, spec, scope = prepare()
    except MlauditError as exc:
        fail(str(exc))
    except Exception as exc:  # the tracker did not answer the listing
        fail(one_line(f"listing the runs of {title}", exc))
    failed_count = 0
    try:
        path = state or default_state_path("batch", tracker, name)
        with StateStore(path, redact_text(scope)) as store:
            if fresh:
                store.reset()
            progress = Progress(
                TextColumn("auditing"),
                BarColumn(),
                MofNCompleteColumn(),
                TextColumn("{task.fields[failed]} failed"),
                TimeRemainingColumn(),
                console=err_console,
                disable=not err_console.is_terminal,
            )
            with progress:
                bar = progress.add_task("audit", total=None, failed=0)

                def on_result(res) -> None:
                    nonlocal failed_count
                    failed_count += not res.ok
                    progress.update(bar, advance=1, failed=failed_count)

                outcome = run_batch(
                    refs,
                    spec,
                    store,
                    jobs=jobs,
                    executor=mode,
                    ray_address=ray_address,
                    on_result=on_result,
                    on_start=lambda n: progress.update(bar, total=n),
                )
    except MlauditError as exc:
        fail(str(exc))
    summary = BatchSummary(
        title=title,
        results=outcome.results,
        from_earlier=outcome.from_earlier,
        seconds=outcome.seconds,
        audited_now=outcome.audited_now,
        timings=outcome.timings,
    )
    tri = where = None
    if triage is not None:
        try:
            tri, where = triage(summary.results)
        except Exception as exc:  # noqa: BLE001 - the audits stand; the triage is reported
            err_console.print(
                redact_text(one_line("triage", exc)), markup=False, highlight=False, soft_wrap=True
            )
    print_batch(summary, fmt, worst, tri, where)
    if mode is Executor.ray and outcome.startup_s:
        err_console.print(f"[dim]ray start-up: {outcome.startup_s:.1f} s (not counted above)[/]")
    sys.stdout.flush()
    if summary.failed:  # an outage must not look like a clean batch to cron or CI
        from mlaudit_core.errors import EXIT_INCOMPLETE

        err_console.print(
            f"mlaudit: {len(summary.failed)} of {len(summary.results)} run(s) could not be "
            f"audited; run the same command again to retry them (the state file {path} keeps "
            f"the {len(summary.ok)} audited run(s); --fresh starts over)",
            markup=False,
            highlight=False,
            soft_wrap=True,
        )
        raise typer.Exit(EXIT_INCOMPLETE)
    raise typer.Exit(0)


def print_batch(summary, fmt: str, worst: int, tri=None, where: str | None = None) -> None:
    """Print a finished batch: the Rich summary (``table``) or one row per run (``json``,
    ``csv``, ``markdown``: :mod:`.batch_formats`), then the triage ``tri``
    (:class:`mlaudit_core.triage.Triage` or None) and ``where`` it was written: after the table,
    inside the JSON document (``where`` on stderr), or on stderr (``csv``, ``markdown``)."""
    from mlaudit_core.redact import redact_text

    from .batch_formats import render

    tri_text = None
    if tri is not None:
        from mlaudit_core.triage import render_text

        tri_text = redact_text(render_text(tri)) + (
            f"triage written to {redact_text(where)}\n" if where else ""
        )
    if fmt == "table":
        from mlaudit_core.service import render_summary

        # A pipe or file is not a terminal: Rich would fold every table at 80 columns and cut
        # run ids across lines; a width no row reaches keeps each row on one greppable line.
        out = Console() if sys.stdout.isatty() else Console(width=100_000)
        render_summary(summary, out, worst_n=worst)
        if tri_text:
            out.print(tri_text, markup=False, highlight=False, end="")
        return
    sys.stdout.write(render(summary, fmt, None if tri is None else tri.to_dict()))
    if tri_text and fmt != "json":
        err_console.print(tri_text, markup=False, highlight=False, end="", soft_wrap=True)
    elif where:  # json: the document is the triage; where it went is said on stderr
        err_console.print(
            f"triage written to {redact_text(where)}", markup=False, highlight=False, soft_wrap=True
        )
    from mlaudit_core.service.timing import split_line

    if split_line(summary.timings, summary.audited_now):  # stdout keeps the rows only
        err_console.print(
            split_line(summary.timings, summary.audited_now), markup=False, highlight=False
        )


def env_with_prefix(*prefixes: str) -> dict[str, str]:
    """This process's environment variables whose names start with one of ``prefixes`` (what a
    tracker's batch forwards to its workers in ``TaskSpec.env``)."""
    return {k: v for k, v in os.environ.items() if k.startswith(prefixes)}
