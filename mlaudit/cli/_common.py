"""Options and the load -> audit -> render -> write-back pipeline shared by all run commands."""

from __future__ import annotations

import os
import traceback
from collections.abc import Callable
from contextlib import contextmanager
from enum import Enum
from pathlib import Path

import typer
from rich.console import Console

from mlaudit_core.errors import MlauditError
from mlaudit_core.report import AuditReport, Severity
from mlaudit_core.rundata import RunData
from mlaudit_core.settings import Settings, SettingsError, load_settings

err_console = Console(stderr=True)


class Format(str, Enum):
    terminal = "terminal"
    markdown = "markdown"
    json = "json"
    #: verdict, cause, confidence, top evidence with file:line, next actions as one JSON line
    #: within MLAUDIT_COMPACT_TOKENS tokens (default 400; mlaudit_core/agent/compact.py)
    compact = "compact"


class FailOn(str, Enum):
    info = "info"
    warning = "warning"
    error = "error"
    critical = "critical"
    never = "never"


FORMAT = typer.Option(Format.terminal, "--format", "-f", help="Output format on stdout.")
#: ``--out`` suffixes and the renderer each selects.
OUT_SUFFIXES = {
    ".json": "json",
    ".md": "markdown",
    ".markdown": "markdown",
    ".txt": "markdown",
    ".html": "html",
    ".htm": "html",
}


#: What ``--out`` accepts, for error lines.
OUT_ACCEPTED = ".json, .md/.markdown/.txt or .html/.htm"


def out_problem(out: Path) -> str | None:
    """Why the report cannot be written to ``out``, or None; creates nothing.

    The suffix must name a format (:data:`OUT_SUFFIXES`); an existing ``out`` must be a
    writable file; otherwise its nearest existing ancestor must be a writable directory
    (missing parent directories are created when writing).
    """
    if out.suffix.lower() not in OUT_SUFFIXES:
        return f"{out}: the suffix must be {OUT_ACCEPTED} (got {out.suffix or 'none'})"
    if out.exists():  # (a dangling symlink is written through, as a new file)
        if out.is_dir():
            return f"cannot write the report to {out}: it is a directory"
        if not os.access(out, os.W_OK):
            return f"cannot write the report to {out}: the file is not writable"
        return None
    base = next((p for p in out.parents if os.path.lexists(p)), Path("."))
    if not base.is_dir():
        return f"cannot write the report: a parent of {out} is not a directory ({base})"
    if not os.access(base, os.W_OK | os.X_OK):
        return f"cannot write the report to {out}: directory {base} is not writable"
    return None


def _check_out(value: Path | None) -> Path | None:
    """Refuse an ``--out`` that cannot be written (:func:`out_problem`) before anything is
    loaded, audited, printed or written back."""
    if value is not None:
        problem = out_problem(value)
        if problem:
            raise typer.BadParameter(problem)
    return value


OUT = typer.Option(
    None,
    "--out",
    "-o",
    callback=_check_out,
    help="Also write the report to FILE (by suffix: .json; .md, .markdown or "
    ".txt for Markdown; .html or .htm).",
)
FAIL_ON = typer.Option(
    None,
    "--fail-on",
    help="Exit 1 when a finding is at or above this severity "
    "(default: settings' fail_on, else never).",
)
CONFIG = typer.Option(
    None,
    "--config",
    help="Settings file (default: mlaudit.toml or pyproject.toml "
    "\\[tool.mlaudit] in the current directory or its parents).",
)
DRY_RUN = typer.Option(False, "--dry-run", help="Show what would be written back; write nothing.")
NO_WRITE = typer.Option(False, "--no-write", help="Do not write the verdict back to the tracker.")
VERBOSE = typer.Option(False, "--verbose", "-v", help="Show info-level findings too.")
NOTIFY = typer.Option(
    None,
    "--notify",
    metavar="URL",
    help="Post the verdict to this webhook (Slack incoming webhook or signed JSON; "
    "repeatable; env:NAME reads the URL from $NAME). Adds to "
    "\\[tool.mlaudit.notify] urls; see docs/notifications.md.",
)


def refuse_input_as_output(option: str, out: Path | None, inputs) -> None:
    """Exit 2 (one line) when the output file ``out`` is one of the input files: writing the
    report or evidence there would replace the user's log (``logs train.txt --out train.txt``).

    ``inputs`` are files or run folders. An existing ``out`` inside an input folder (a run
    folder: a Lightning ``version_0``, an HF ``output_dir``, a TensorBoard logdir) is an
    input file of that run and refused too (``mlaudit DIR --out DIR/train.txt`` replaced the
    log the run was read from), unless it is a report mlaudit wrote there before
    (:func:`_is_mlaudit_report`): re-running with the same ``--out`` keeps working.
    """
    if out is None:
        return
    try:
        out_res = out.resolve()
        out_file = out.is_file()
    except OSError:
        return
    for p in inputs or ():
        p = Path(p)
        try:
            same = p.exists() and out.exists() and out.samefile(p)
        except OSError:
            same = False
        if same or p.resolve() == out_res:
            fail(f"{option} {out}: is an input file; it would be overwritten")
        try:
            inside = out_file and p.is_dir() and out_res.is_relative_to(p.resolve())
        except OSError:
            inside = False
        if inside and not _is_mlaudit_report(out):
            fail(f"{option} {out}: is an input file of the run in {p}; it would be overwritten")


def _is_mlaudit_report(path: Path) -> bool:
    """Whether ``path`` holds a report mlaudit wrote (Markdown ``# mlaudit:``, report JSON with
    ``schema_version``/``tool_version``, the multi-run JSON list or Markdown stream, or the HTML
    page): the first 4 KiB are read."""
    try:
        with open(path, "rb") as fh:
            head = fh.read(4096).decode("utf-8", "replace")
    except OSError:
        return False
    h = head.lstrip()
    if h.startswith("# mlaudit:"):
        return True
    if h.startswith("<!-- ") and "\n# mlaudit:" in h:
        return True
    if h.startswith("{") and '"schema_version"' in h and '"tool_version"' in h:
        return True
    if h.startswith("[") and ('"reader"' in h and '"report"' in h or h.rstrip() == "]"):
        return True
    return h.lower().startswith("<!doctype html>") and "mlaudit" in h


def fail(message: str, code: int = 2) -> None:
    """Print one clear error line to stderr and exit with ``code``."""
    from rich.markup import escape

    from mlaudit_core.redact import redact_text

    err_console.print(
        f"[bold red]mlaudit: error:[/] {escape(redact_text(message))}",
        markup=True,
        highlight=False,
        emoji=False,
        soft_wrap=True,
    )
    raise typer.Exit(code)


def settings_or_fail(config: Path | None) -> Settings:
    try:
        return load_settings(explicit=config)
    except SettingsError as exc:
        fail(str(exc))
        raise  # unreachable


def write_out(report: AuditReport, out: Path, run: RunData | None = None) -> None:
    """Write the report to ``out`` in the format its suffix names, and say so on stderr.

    Missing parent directories are created. Exit 2 (one line) when ``out`` has no report
    suffix (:data:`OUT_SUFFIXES`) or cannot be written (a directory, a parent that is a
    file, a read-only place).
    """
    from mlaudit_core.render import render_json, render_markdown

    kind = OUT_SUFFIXES.get(out.suffix.lower())
    if kind is None:
        fail(f"{out}: the suffix must be {OUT_ACCEPTED} (got {out.suffix or 'none'})")
    if kind == "json":
        text = render_json(report)
    elif kind == "html":
        from mlaudit_core.render.html import render_html  # added by the HTML report work

        text = render_html(report, run)
    else:
        text = render_markdown(report)
    try:
        out.parent.mkdir(parents=True, exist_ok=True)
        out.write_text(text, encoding="utf-8")
    except (NotADirectoryError, FileExistsError):  # mkdir or open under a regular file
        fail(f"{out}: cannot write the report (a parent of {out} is not a directory)")
    except OSError as exc:  # a directory, a read-only place...
        fail(f"{out}: cannot write the report ({exc.strerror or type(exc).__name__})")
    err_console.print(f"wrote {out}", highlight=False, markup=False)


def emit(report: AuditReport, fmt: Format, verbose: bool = False) -> None:
    from mlaudit_core.render import render_json, render_markdown, render_terminal

    if fmt is Format.json:
        typer.echo(render_json(report))
    elif fmt is Format.compact:
        from mlaudit_core.agent.compact import render_compact

        typer.echo(render_compact(report, compact_budget()))
    elif fmt is Format.markdown:
        typer.echo(render_markdown(report))
    else:
        render_terminal(report, Console(), verbose=verbose)


def compact_budget() -> int:
    """``MLAUDIT_COMPACT_TOKENS`` (default 400), the token budget of ``--format compact``."""
    import os

    from mlaudit_core.agent.compact import DEFAULT_TOKENS, MAX_TOKENS, MIN_TOKENS

    raw = os.environ.get("MLAUDIT_COMPACT_TOKENS", "").strip()
    if not raw:
        return DEFAULT_TOKENS
    if not raw.isdigit() or not MIN_TOKENS <= int(raw) <= MAX_TOKENS:
        fail(
            f"MLAUDIT_COMPACT_TOKENS={raw!r}: give a whole number of tokens from {MIN_TOKENS} "
            f"to {MAX_TOKENS}"
        )
    return int(raw)


def exit_code(report: AuditReport, fail_on: FailOn | None, settings: Settings) -> int:
    level = fail_on.value if fail_on else (settings.fail_on or "never")
    if level == "never":
        return 0
    worst = report.max_severity()
    return 1 if worst is not None and worst.rank >= Severity(level).rank else 0


def run_pipeline(
    load: Callable[[], RunData],
    *,
    fmt: Format,
    out: Path | None,
    fail_on: FailOn | None,
    config: Path | None,
    write_back: Callable[[RunData, AuditReport], object] | None = None,
    verbose: bool = False,
    what: str = "run",
    notify: list[str] | None = None,
    dry_run: bool = False,
    audit_fn: Callable[[RunData, Settings], AuditReport] | None = None,
) -> AuditReport:
    """Load, audit, print, optionally write back; exits with the documented code.

    Bad input (``MlauditError``) prints one line and exits 2 before anything is
    written back. Unexpected exceptions print one line and exit 3
    (``MLAUDIT_DEBUG=1`` shows the traceback). ``notify``: webhook URLs (the command's
    ``--notify``), added to ``[tool.mlaudit.notify]`` and posted to after the write-back,
    not when ``dry_run``; a failed notification is a warning line, never an exit code.
    ``audit_fn``: replaces :func:`mlaudit_core.audit.audit` (e.g. to add baselines).
    """
    import os

    from rich.markup import escape

    from mlaudit_core.audit import audit
    from mlaudit_core.notify import notify_config

    settings = settings_or_fail(config)
    try:
        targets, policy = notify_config(settings.notify, notify or [], source=settings.source)
    except SettingsError as exc:
        fail(str(exc))
    try:
        with _stages(2) as stage:
            stage(f"loading {what}")
            run = load()
            n_keys = len(run.metrics.keys)
            stage(f"auditing {len(run.metrics):,} points of {n_keys} metric{'s' * (n_keys != 1)}")
            report = (audit_fn or audit)(run, settings)
    except MlauditError as exc:
        fail(str(exc))
    except SettingsError as exc:
        fail(str(exc))
    except Exception as exc:  # a bug: one line, and the traceback on request
        if os.environ.get("MLAUDIT_DEBUG"):
            traceback.print_exc()
        fail(f"internal error while auditing {what}: {type(exc).__name__}: {exc}", code=3)
    emit(report, fmt, verbose)
    if out:
        with _stages(1) as stage:
            stage(f"writing {out.name}")
            write_out(report, out, run)
    if write_back is not None:
        try:
            with _stages(1) as stage:
                stage("writing the verdict back")
                result = write_back(run, report)
        except MlauditError as exc:
            fail(str(exc))
        except Exception as exc:  # a bug or a tracker fault mid-write: one line, exit 3
            if os.environ.get("MLAUDIT_DEBUG"):
                traceback.print_exc()
            fail(f"writing the verdict back failed: {type(exc).__name__}: {exc}", code=3)
        for line in getattr(result, "lines", lambda: [])():
            err_console.print(f"[dim]{escape(line)}[/]", highlight=False, soft_wrap=True)
    if targets:
        _notify(report, targets, policy, dry_run)
    raise typer.Exit(exit_code(report, fail_on, settings))


def _notify(report: AuditReport, targets, policy, dry_run: bool) -> None:
    """Send notifications (not with ``--dry-run``); one dim line per target on stderr."""
    from rich.markup import escape

    from mlaudit_core.notify import send_verdict

    if dry_run:
        for t in targets:
            err_console.print(
                f"[dim]would notify {escape(t.label)}[/]", highlight=False, soft_wrap=True
            )
        return
    with _stages(1) as stage:
        stage("sending notifications")
        deliveries = send_verdict(report, targets, policy)  # failures: one warning line each
    for d in deliveries:
        if d.sent:
            err_console.print(
                f"[dim]notified {escape(d.target)}[/]", highlight=False, soft_wrap=True
            )
        elif d.skipped:
            err_console.print(
                f"[dim]did not notify {escape(d.target)}: {escape(d.skipped)}[/]",
                highlight=False,
                soft_wrap=True,
            )


@contextmanager
def _stages(total: int):
    """A progress bar on stderr over ``total`` stages, when stderr is a terminal.

    Yields ``stage(description)``, called at the start of each stage. The bar is
    transient (erased when done) and absent when stderr is not a TTY, so piped
    output and CI logs stay clean.
    """
    if not err_console.is_terminal:
        yield lambda description: None
        return
    from rich import progress as rp

    columns = (
        rp.SpinnerColumn(),
        rp.TextColumn("{task.description}"),
        rp.BarColumn(bar_width=24),
        rp.MofNCompleteColumn(),
        rp.TimeElapsedColumn(),
    )
    with rp.Progress(*columns, console=err_console, transient=True) as progress:
        task = progress.add_task("", total=total)
        started = [False]

        def stage(description: str) -> None:
            from rich.markup import escape

            if started[0]:
                progress.advance(task)
            started[0] = True
            progress.update(task, description=escape(description) + "…")
            progress.refresh()  # show the stage now, not at the next tick

        yield stage
