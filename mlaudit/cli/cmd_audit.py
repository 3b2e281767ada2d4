"""``mlaudit PATH`` / ``mlaudit audit PATH``: audit any local run file or folder, format sniffed.

The reader is chosen by :mod:`mlaudit_core.formats` (one line on stderr says which and
why; ``--as FORMAT`` overrides). A folder holding several runs is listed and each run
audited, then the batch summary is printed. Write-back: TensorBoard runs get the verdict
as a text summary in mlaudit's own event file (as ``mlaudit tensorboard`` does); nothing
is written into any other local format's folder.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import typer

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
    refuse_input_as_output,
    run_pipeline,
)

#: Readers whose runs get the verdict written back into the user's folder (see module doc).
WRITES_BACK = {"tensorboard"}
#: Runs audited per call on a folder holding several runs (``--max-runs``; 0 audits every run).
#: At ~55 ms a run (one-row CSVs, the 2-core development machine, benchmarks/many_runs.py)
#: 1,000 runs take about a minute; a tree of 10,000 took 10 minutes before anything was shown.
#: The runs beyond it are counted on stderr, never silently dropped. Reports are streamed
#: (written as each run is audited, not kept), so memory does not grow with the count.
MAX_RUNS = 1000
#: Runs named one per line on stderr before auditing; the rest are counted.
LIST_LINES = 50


def _say(text: str) -> None:
    """One line on stderr; file names are run-controlled: control codes shown as ``\\xNN``."""
    from mlaudit_core.redact import redact_text

    err_console.print(redact_text(text), markup=False, highlight=False, soft_wrap=True)


def _write_back(reader: str, dry_run: bool):
    if reader not in WRITES_BACK:
        return None
    from mlaudit_core.plugins import get_plugin

    plugin = get_plugin("tensorboard")
    return lambda run, rep: plugin.write_back(run, rep, dry_run=dry_run)


def _list_formats(value: bool) -> None:
    """``--formats``: eager (handled before PATH is checked), so ``mlaudit audit --formats`` works."""
    if not value:
        return
    from mlaudit_core.formats import readers

    for name, r in readers().items():
        typer.echo(f"{name:16} {getattr(r, 'DETECTS', '')}")
    raise typer.Exit(0)


def register(app: typer.Typer) -> None:
    @app.command("audit")
    def audit_cmd(
        path: str = typer.Argument(
            ..., help="A run file or folder, or a folder holding several runs."
        ),
        as_: str = typer.Option(
            None,
            "--as",
            metavar="FORMAT",
            help="Use this reader instead of sniffing (see 'mlaudit audit --formats').",
        ),
        list_only: bool = typer.Option(
            False, "--list", help="List the runs found and their readers; audit nothing."
        ),
        formats: bool = typer.Option(
            False,
            "--formats",
            help="List the readers and exit (no PATH needed).",
            is_eager=True,
            callback=_list_formats,
        ),
        max_runs: int = typer.Option(
            MAX_RUNS,
            "--max-runs",
            min=0,
            help="Audit at most this many runs of a folder (path order); 0: all.",
        ),
        fmt: Format = FORMAT,
        out: Path = OUT,
        fail_on: FailOn = FAIL_ON,
        config: Path = CONFIG,
        dry_run: bool = DRY_RUN,
        no_write: bool = NO_WRITE,
        verbose: bool = VERBOSE,
        notify: list[str] = NOTIFY,
    ) -> None:
        """Audit a local run file or folder; the format is detected (docs/formats.md).

        Hugging Face trainer_state.json, Lightning/Keras/Ultralytics/timm CSV logs,
        detectron2/mmdetection/DETR/LLaMA-Factory JSON-lines logs, console logs,
        TensorBoard log directories, MLflow file stores, W&B run folders and ClearML
        offline sessions. Also reachable as 'mlaudit PATH'.
        """
        from mlaudit_core.errors import MlauditError
        from mlaudit_core.formats import plan, readers

        if not path.strip():  # Path("") is the current folder: an unset "$RUN" audited it
            fail(f"{path!r}: an empty path; name the run file or folder to audit")
        run_path = Path(path)
        table = readers()
        refuse_input_as_output("--out", out, [run_path])
        try:
            cands, skipped = plan(run_path, as_)
        except MlauditError as exc:
            fail(str(exc))
        refuse_input_as_output("--out", out, [c.path for c in cands])
        for where, why in skipped:
            _say(f"skipped {where}: {why}")
        if list_only:
            for c in cands:
                from mlaudit_core.redact import redact_text

                typer.echo(redact_text(f"{c.path}\t{c.reader}\t{c.confidence:.2f}\t{c.reason}"))
            raise typer.Exit(0)
        if len(cands) == 1:
            c = cands[0]
            _say(f"reader: {c.reader} ({c.reason}; confidence {c.confidence:.2f}) for {c.path}")
            wb = None if no_write else _write_back(c.reader, dry_run)

            def load():
                run = table[c.reader].load(c.path)
                run.notes.insert(0, f"read by the {c.reader} reader: {c.reason}")
                return run

            run_pipeline(
                load,
                fmt=fmt,
                out=out,
                fail_on=fail_on,
                config=config,
                write_back=wb,
                verbose=verbose,
                what=str(c.path),
                notify=notify,
                dry_run=dry_run,
            )
            return
        _audit_many(
            run_path,
            cands,
            table,
            fmt=fmt,
            out=out,
            fail_on=fail_on,
            config=config,
            dry_run=dry_run,
            no_write=no_write,
            verbose=verbose,
            max_runs=max_runs,
        )


class _Stream:
    """Reports written as each run is audited: a JSON list (``[`` ... ``]``), Markdown
    sections, or compact JSON lines, to ``write`` (stdout or the ``--out`` file). Nothing is
    kept in memory (benchmarks/many_runs.py measures it)."""

    def __init__(self, write, kind: str) -> None:
        self.write, self.kind, self.n = write, kind, 0
        self.budget = None
        if kind == "json":
            write("[")

    def add(self, c, report) -> None:
        from mlaudit_core.render import render_json, render_markdown

        if self.kind == "json":
            self.write(
                ("," if self.n else "") + f'\n{{"path": {json.dumps(str(c.path))}, "reader": '
                f'{json.dumps(c.reader)}, "report": {render_json(report)}}}'
            )
        elif self.kind == "compact":  # one JSON line per run
            from mlaudit_core.agent.compact import compact_report

            from ._common import compact_budget

            if self.budget is None:
                self.budget = compact_budget()
            self.write(
                json.dumps(
                    {
                        "path": str(c.path),
                        "reader": c.reader,
                        **compact_report(report, self.budget),
                    },
                    separators=(",", ":"),
                    ensure_ascii=False,
                )
                + "\n"
            )
        else:
            # a path holding '--' could close the comment and open live HTML ('x--><img ...>')
            where = re.sub(r"-{2,}", lambda m: " ".join(m.group()), f"{c.path} ({c.reader})")
            self.write(("\n\n" if self.n else "") + f"<!-- {where} -->\n{render_markdown(report)}")
        self.n += 1

    def close(self) -> None:
        if self.kind == "json":
            self.write("\n]\n" if self.n else "]\n")
        elif self.kind == "markdown":
            self.write("\n")


def _audit_many(
    path: Path,
    cands,
    table,
    *,
    fmt: Format,
    out: Path | None,
    fail_on: FailOn | None,
    config: Path | None,
    dry_run: bool,
    no_write: bool,
    verbose: bool,
    max_runs: int = MAX_RUNS,
) -> None:
    """Audit the runs found under ``path`` (at most ``max_runs``, path order); stream each report
    (json: one list) to stdout and to ``--out`` as it is made, then print the summary."""
    import sys
    import time

    from rich.console import Console

    from mlaudit_core.audit import audit
    from mlaudit_core.errors import MlauditError
    from mlaudit_core.redact import redact_text
    from mlaudit_core.service import BatchSummary, render_summary
    from mlaudit_core.service.task import RunResult

    from ._common import exit_code, settings_or_fail

    settings = settings_or_fail(config)

    def rel(p: Path) -> str:  # run paths relative to PATH keep the tables readable
        try:
            r = p.resolve().relative_to(path.resolve()).as_posix()
        except ValueError:
            return str(p)
        return r if r != "." else p.name

    found = len(cands)
    _say(f"{path}: {found:,} runs found")
    if max_runs and found > max_runs:
        cands = cands[:max_runs]
        _say(
            f"{path}: auditing the first {max_runs:,} in path order (--max-runs {max_runs}; --max-runs 0 audits "
            f"all); {found - max_runs:,} left out"
        )
    for c in cands[:LIST_LINES]:
        _say(f"  {rel(c.path) if c.path != path else c.path}  [{c.reader}: {c.reason}]")
    if len(cands) > LIST_LINES:
        _say(f"  ... and {len(cands) - LIST_LINES:,} more (--list names them all)")
    if out is not None and out.suffix.lower() in (".html", ".htm"):
        fail(f"{out}: one HTML report per run; with several runs use --out with .json or .md")
    streams = []
    if fmt is not Format.terminal:
        streams.append(_Stream(sys.stdout.write, fmt.value))
    out_fh = None
    if out is not None:
        try:
            out.parent.mkdir(parents=True, exist_ok=True)
            out_fh = open(out, "w", encoding="utf-8")  # noqa: SIM115 - closed after the last run
        except OSError as exc:
            fail(f"{out}: cannot write the report ({exc.strerror or type(exc).__name__})")
        streams.append(
            _Stream(out_fh.write, "json" if out.suffix.lower() == ".json" else "markdown")
        )
    results: list[RunResult] = []
    written: list[
        str
    ] = []  # runs whose folder got (or, dry run, would get) the *.mlaudit event file
    worst_code = 0
    t0 = time.perf_counter()
    for c in cands:
        res = RunResult(ref=rel(c.path))
        t = time.perf_counter()
        stage = "load"
        try:
            run = table[c.reader].load(c.path)
            run.notes.insert(0, f"read by the {c.reader} reader: {c.reason}")
            res.name = run.identity.name or ""
            stage = "audit"
            report = audit(run, settings)
            res.take_verdict(report)
            for st in streams:
                st.add(c, report)
            worst_code = max(worst_code, exit_code(report, fail_on, settings))
            wb = None if no_write else _write_back(c.reader, dry_run)
            if wb is not None:
                stage = "write-back"
                wb(run, report)
                res.wrote = not dry_run
                written.append(rel(c.path))
        except MlauditError as exc:
            res.ok, res.error = False, redact_text(f"{stage}: {exc}")
        except Exception as exc:  # noqa: BLE001 - one run's bug is its result, the batch goes on
            res.ok, res.error = (
                False,
                redact_text(f"{stage}: internal error {type(exc).__name__}: {exc}"),
            )
        res.seconds = time.perf_counter() - t
        results.append(res)
    for st in streams:
        st.close()
    sys.stdout.flush()
    if out_fh is not None:
        out_fh.close()
    console = Console(stderr=fmt is not Format.terminal)
    if fmt is Format.terminal:
        from rich.markup import escape
        from rich.table import Table

        t = Table(title="Runs", title_justify="left")
        for col in ("run", "reader", "outcome", "cause", "confidence"):
            t.add_column(col, overflow="fold")
        for c, r in zip(cands, results):
            t.add_row(
                escape(rel(c.path)),
                c.reader,
                r.outcome or ("unreadable" if not r.ok else ""),
                r.cause or "",
                f"{r.confidence:.2f}" if r.confidence is not None else "",
            )
        console.print(t)
    summary = BatchSummary(
        title=str(path), results=results, seconds=time.perf_counter() - t0, audited_now=len(results)
    )
    render_summary(summary, console)
    _say(
        f"audited {sum(r.ok for r in results):,} of {found:,} runs found"
        + (
            f" ({found - len(cands):,} left out by --max-runs {max_runs})"
            if found > len(cands)
            else ""
        )
    )
    if (
        written
    ):  # a file in the user's run folders must never be a surprise (single-run audits say it too)
        n = len(written)
        _say(
            f"{'would write' if dry_run else 'wrote'} the verdict into {n:,} TensorBoard log "
            f"director{'y' if n == 1 else 'ies'} (an events.*.mlaudit file each, shown in the Text tab; "
            f"--no-write writes nothing): {', '.join(written[:5])}"
            + (f", ... {n - 5:,} more" if n > 5 else "")
        )
    if out is not None:
        _say(f"wrote {out}")
    raise typer.Exit(worst_code)
