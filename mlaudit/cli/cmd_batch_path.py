"""``mlaudit batch path DIR``: audit every run found under a local folder, with a summary and,
with ``--triage``, what the failing runs have in common.

The runs are the ones ``mlaudit audit DIR`` finds (:func:`mlaudit_core.formats.plan`: MLflow
file stores, W&B run folders, TensorBoard logdirs, framework logs...), each read by its reader
and audited in this process (threads: ``--jobs``); nothing is written into the folder (the
folder is the user's data, and often a checkout of someone else's). ``--triage`` runs
:func:`mlaudit_core.triage.triage` on the runs with their params, tags, commit, host and start
time as their readers give them (:func:`mlaudit_core.triage.record_of_run`).

Exit 0 once the summary is printed, 4 when some runs could not be read (listed with the
reason), 2 for bad input (no such folder, nothing recognisable under it).
"""

from __future__ import annotations

from pathlib import Path

import typer

from . import cmd_batch as B
from ._common import CONFIG, fail

#: Most runs read under one folder (``--max-runs``); beyond it the rest are counted, not read.
MAX_RUNS = 10_000


def register(app: typer.Typer) -> None:
    B.batch_app.command("path")(batch_path)


def batch_path(
    path: str = typer.Argument(
        ...,
        help="A folder holding runs (an mlruns store, W&B run "
        "folders, TensorBoard logdirs, framework logs...).",
    ),
    as_: str = typer.Option(
        None, "--as", metavar="FORMAT", help="Use this reader for every run instead of sniffing."
    ),
    jobs: int = typer.Option(2, "--jobs", "-j", min=1, max=64, help="Runs read at the same time."),
    max_runs: int = typer.Option(
        MAX_RUNS, "--max-runs", min=1, help="Read at most this many runs (path order)."
    ),
    worst: int = B.WORST,
    fmt: str = B.FORMAT,
    triage: bool = B.TRIAGE,
    config: Path = CONFIG,
) -> None:
    """Audit every run under a local folder (read only: nothing is written there)."""
    import time
    from concurrent.futures import ThreadPoolExecutor

    from mlaudit_core.errors import EXIT_INCOMPLETE, MlauditError
    from mlaudit_core.formats import plan, readers
    from mlaudit_core.redact import redact_text
    from mlaudit_core.service import BatchSummary
    from mlaudit_core.service.task import RunResult, one_line, warm_up

    from ._common import err_console, settings_or_fail
    from .batch_formats import FORMATS

    if not path.strip():  # Path("") is the current folder: an unset "$RUNS" audited it
        fail(f"{path!r}: an empty path; name the folder that holds the runs")
    folder = Path(path)
    if fmt not in FORMATS:
        fail(f"--format {fmt!r}: use one of {', '.join(FORMATS)}")
    settings = settings_or_fail(config)
    try:
        cands, skipped = plan(folder, as_)
    except MlauditError as exc:
        fail(str(exc))
    for where, why in skipped:
        err_console.print(
            redact_text(f"skipped {where}: {why}"), markup=False, highlight=False, soft_wrap=True
        )
    if len(cands) > max_runs:
        err_console.print(
            f"{len(cands):,} runs found under {redact_text(str(path))}; reading the "
            f"first {max_runs:,} (path order, --max-runs)",
            markup=False,
            highlight=False,
        )
        cands = cands[:max_runs]
    table = readers()
    root = folder.resolve()

    def rel(p: Path) -> str:
        try:
            r = p.resolve().relative_to(root).as_posix()
        except ValueError:
            return str(p)
        return r if r != "." else p.name

    def one(c) -> tuple[RunResult, dict | None]:
        from mlaudit_core.audit import audit
        from mlaudit_core.triage import record_of_run

        res, t0, stage = RunResult(ref=rel(c.path)), time.perf_counter(), "load"
        try:
            run = table[c.reader].load(c.path)
            res.name = run.identity.name or ""
            stage = "audit"
            res.take_verdict(audit(run, settings))
            record = record_of_run(run, res.outcome, res.cause)
            record["run_id"] = (
                res.ref
            )  # the run's place under DIR: unique, and what the table shows
            return res, record
        except Exception as exc:  # noqa: BLE001 - one unreadable run is its row, never the batch's end
            res.ok, res.error = False, one_line(stage, exc)
            return res, None
        finally:
            res.seconds = time.perf_counter() - t0

    warm_up()
    t0 = time.perf_counter()
    with ThreadPoolExecutor(max_workers=jobs) as pool:
        done = list(pool.map(one, cands))
    results = [r for r, _ in done]
    summary = BatchSummary(
        title=f"runs under {path}",
        results=results,
        seconds=time.perf_counter() - t0,
        audited_now=len(results),
    )
    tri = None
    if triage:
        from mlaudit_core.triage import triage as run_triage

        tri = run_triage([rec for _, rec in done if rec is not None])
        failed = len(summary.failed)
        if failed:
            tri.statements.insert(
                0, f"{failed} run(s) could not be read or audited and take no part"
            )
    B.print_batch(summary, fmt, worst, tri, None)
    if summary.failed:
        raise typer.Exit(EXIT_INCOMPLETE)
    raise typer.Exit(0)
