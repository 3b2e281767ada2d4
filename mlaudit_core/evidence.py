"""The evidence pass: what a failure's logs and repository say, each item cited by file:line, no verdict.

This is the first stage of ``mlaudit ci`` and of ``mlaudit logs``, the whole of ``mlaudit
evidence``, and the ``collect_evidence`` tool of ``mlaudit mcp``: one collection, four users. The
collection itself is :func:`mlaudit_core.ci.collect` (log lines with context windows, test
outcomes, printed assertion figures, gates parsed from the repository with ``ast``, golden
files, config and source candidates, environment changes) followed by
:func:`mlaudit_core.ci.recompute.recompute` (every gated metric recomputed from the raw
values); :func:`collect` runs both once and :meth:`Evidence.to_dict` writes them as plain
JSON. :func:`mlaudit_core.audit.audit_ci` starts from the same :class:`Evidence` object, so the
evidence a user reads is exactly what the CI verdict was decided on.

Without a repository (``repo=None``) only the logs are read, with the same line scanner
(:func:`mlaudit_core.ci.logs.scan_logs`): failure, pass and metric lines, tests, timeouts,
infrastructure signatures and exceptions. The text logs are then read in ONE pass shared with the
console-log reader (:func:`mlaudit_core.formats.consolelog.load_logs` with a ``tap``): the scanner gets the
raw lines, the reader makes the run (:attr:`Evidence.run`, what ``mlaudit logs`` audits) with
its bounded memory. Raw lines are held for the scanner up to :data:`RAW_LINES_CAP`; a longer
log is scanned on the lines the reader kept (head, tail, and the lines that can hold a failure
signature or a traceback, with context; docs/logs.md), and the notes say so.

Output shape (``schema: "mlaudit-evidence/1"``): every line item is
``{"file", "line", "text", "context": ["n: text", ...], "kind"}``; gates are
``{"file", "line", "expr", "kind", "metric", "rtol", "atol", "threshold", "op", ...}``;
recomputed metrics carry the figures and the per-gate checks (``passed``, ``n_exceed``,
``worst_step``, ``detail``) with the gate's file:line. Nothing in it is a judgement.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from .errors import InputError

SCHEMA = "mlaudit-evidence/1"
#: Value files among ``logs`` (read as actual metric values, as ``mlaudit ci`` does).
VALUE_SUFFIXES = (".json", ".csv", ".tsv", ".npy", ".npz")
#: Raw log lines held for the evidence scanner in the logs-only pass (all files together).
#: Measured on a 1,000,000-line key=value log (33 MB): ``collect`` peaks at 292 MB RSS against
#: 201 MB for the console reader alone (144 s vs 134 s on the shared 2-core machine), the lines
#: and the evidence items of the first 500,000 lines; past the cap the scanner reads the console
#: reader's retained lines (70,000 + the relevant middle lines), so memory stays bounded.
RAW_LINES_CAP = 500_000


@dataclass
class Evidence:
    """One collection: the CI context, the logs as console lines, and the recomputed gates.

    Attributes:
        context: :class:`~mlaudit_core.ci.model.CIContext` (lines, gates, values, notes).
        console: every text log line (:class:`~mlaudit_core.rundata.ConsoleLine`), in order.
        recomputed: :class:`~mlaudit_core.ci.recompute.Recompute` per gated metric with golden
            and actual values (empty without a repository or without golden values).
        repo: the repository given, or ``None`` for logs only.
        run: logs only: the text logs read as a run
            (:class:`~mlaudit_core.rundata.RunData`, as :func:`mlaudit_core.formats.consolelog.load_logs`
            makes it), the input of ``mlaudit logs``; ``None`` with a repository or when only
            value files were given.
    """

    context: Any
    console: list = field(default_factory=list)
    recomputed: list = field(default_factory=list)
    repo: str | None = None
    run: Any = None

    def to_dict(self) -> dict[str, Any]:
        """The evidence as JSON-compatible data (non-finite floats become ``None``)."""
        ctx = self.context

        def line(x) -> dict:
            return {
                "file": x.source,
                "line": x.line,
                "text": x.text,
                "context": list(x.context),
                "kind": x.kind,
            }

        def gate(g) -> dict:
            d = asdict(g)
            d["file"] = d.pop("path")
            return d

        def values(vs) -> dict:
            return {
                "source": vs.source,
                "role": vs.role,
                "label": vs.label,
                "metrics": {
                    k: {
                        "points": len(st),
                        "first_step": st[0] if st else None,
                        "last_step": st[-1] if st else None,
                    }
                    for k, (st, _) in vs.metrics.items()
                },
            }

        def check(c) -> dict:
            return {
                "gate": {
                    "file": c.gate.path,
                    "line": c.gate.line,
                    "expr": c.gate.expr,
                    "kind": c.gate.kind,
                },
                "passed": c.passed,
                "n_steps": c.n_steps,
                "n_exceed": c.n_exceed,
                "allowed": c.allowed,
                "worst_step": c.worst_step,
                "detail": c.detail,
                "active": c.active,
                "active_reason": c.active_reason,
                "log_failed": c.log_failed,
                "analysis": c.analysis,
            }

        def rec(r) -> dict:
            return {
                "metric": r.metric,
                "golden_source": r.golden.source,
                "actual_source": r.actual.source,
                "n_golden": r.n_golden,
                "n_actual": r.n_actual,
                "n_common": r.n_common,
                "golden_steps": list(r.golden_steps),
                "actual_steps": list(r.actual_steps),
                "only_golden": r.only_golden,
                "only_actual": r.only_actual,
                "max_abs": r.max_abs,
                "max_rel": r.max_rel,
                "mean_rel": r.mean_rel,
                "max_rel_step": r.max_rel_step,
                "first_step": r.first_step,
                "median_golden": r.median_golden,
                "median_actual": r.median_actual,
                "nonfinite_actual": r.nonfinite_actual,
                "checks": [check(c) for c in r.checks],
            }

        out = {
            "schema": SCHEMA,
            "repo": self.repo,
            "logs": list(ctx.logs),
            "failure_lines": [line(x) for x in ctx.failure_lines],
            "pass_lines": [line(x) for x in ctx.pass_lines],
            "metric_lines": [line(x) for x in ctx.metric_lines],
            "timeouts": [line(x) for x in ctx.timeouts],
            "infra": [line(x) for x in ctx.infra],
            "exceptions": [line(x) for x in ctx.exceptions],
            "tests": [
                {
                    "test": t.test,
                    "outcome": t.outcome,
                    "file": t.source,
                    "line": t.line,
                    "message": t.message,
                }
                for t in ctx.tests
            ],
            "assertions": [asdict(a) | {"file": a.source} for a in ctx.assertions],
            "measured": [asdict(m) | {"file": m.source} for m in ctx.measured],
            "failed_metrics": list(ctx.failed_metrics),
            "failed_metrics_line": line(ctx.failed_metrics_line)
            if ctx.failed_metrics_line
            else None,
            "checked_metrics": ctx.checked_metrics,
            "checked_metrics_source": (
                line(ctx.checked_metrics_source) if ctx.checked_metrics_source else None
            ),
            "config_candidates": [line(x) for x in ctx.config_candidates],
            "source_candidates": [line(x) for x in ctx.source_candidates],
            "gates": [gate(g) for g in ctx.gates],
            "golden_files": list(ctx.golden_files),
            "goldens": [values(v) for v in ctx.goldens],
            "actuals": [values(v) for v in ctx.actuals],
            "traced": [asdict(t) for t in ctx.traced],
            "env_changes": [asdict(e) | {"file": e.source} for e in ctx.env_changes],
            "packages_log": dict(ctx.packages_log),
            "packages_repo": dict(ctx.packages_repo),
            "recomputed": [rec(r) for r in self.recomputed],
            "notes": list(ctx.notes),
        }
        return _clean(out)

    def counts(self) -> dict[str, int]:
        """How many items of each kind were collected (for a one-line summary)."""
        ctx = self.context
        return {
            "failure_lines": len(ctx.failure_lines),
            "pass_lines": len(ctx.pass_lines),
            "metric_lines": len(ctx.metric_lines),
            "tests": len(ctx.tests),
            "gates": len(ctx.gates),
            "golden_files": len(ctx.golden_files),
            "config_candidates": len(ctx.config_candidates),
            "source_candidates": len(ctx.source_candidates),
            "recomputed": len(self.recomputed),
        }


def _clean(x):
    if isinstance(x, float) and not math.isfinite(x):
        return None
    if isinstance(x, dict):
        return {k: _clean(v) for k, v in x.items()}
    if isinstance(x, (list, tuple)):
        return [_clean(v) for v in x]
    return x


def collect(
    repo: Path | str | None,
    logs: Sequence[Path | str],
    golden: Sequence[Path | str] = (),
    window_lines: int = 3,
    *,
    config: Sequence[Path | str] = (),
    name: str | None = None,
    value_files: bool = True,
) -> Evidence:
    """Collect the evidence of a failure from its logs and (optionally) its repository.

    Args:
        repo: the repository root, or ``None`` to read the logs only.
        logs: log files (``.json``/``.csv``/``.tsv``/``.npy``/``.npz`` are actual metric values;
            without a repository ``-`` is standard input and ``.gz`` is decompressed).
        golden: golden-value files; with a repository and none given, the repository's own.
        window_lines: context lines kept on each side of a cited line.
        config: logs only: run config / context files whose values become the run's params
            (``mlaudit logs --config``).
        name: logs only: the run's display name.
        value_files: logs only: read ``.json``/``.csv``/... logs as metric values (``mlaudit
            evidence``); False reads every file as a console log (``mlaudit logs``).

    Returns:
        The :class:`Evidence` (with a repository: recomputed gates included).

    Raises:
        InputError: no log given, a missing repository or file, an unreadable value file.
    """
    from .ci import collect as ci_collect
    from .ci.recompute import recompute

    log_paths = [Path(p) for p in logs]
    golden_paths = [Path(p) for p in golden]
    if repo is not None:
        ctx, console = ci_collect(Path(repo), log_paths, golden_paths, window_lines)
        return Evidence(ctx, console, recompute(ctx), str(repo))
    if not log_paths:
        raise InputError("--logs: give at least one log file (or --repo)")
    return _logs_only(
        log_paths, golden_paths, window_lines, [Path(p) for p in config], name, value_files
    )


def _logs_only(
    logs: list[Path],
    golden: list[Path],
    window_lines: int,
    config: Sequence[Path] = (),
    name: str | None = None,
    value_files: bool = True,
) -> Evidence:
    """Logs without a repository: the same log scanner and value readers as ``ci.collect``;
    the text logs read once, shared with the console-log reader that makes the run."""
    from .ci.golden import TooBig, TooDeep, load_values
    from .ci.model import CIContext
    from .ci.recompute import recompute

    # mlaudit logs (value_files False): the console reader names each unreadable log itself
    for p in [*logs, *golden] if value_files else golden:
        if str(p) != "-" and not p.is_file():
            raise InputError(f"{p}: file not found")
    ctx = CIContext(repo="", logs=[str(p) for p in logs])
    text_logs: list[Path] = []
    for p in logs:
        if value_files and p.suffix.lower() in VALUE_SUFFIXES:
            try:
                ctx.actuals += load_values(p, "actual", str(p))
            except (TooDeep, TooBig) as exc:
                ctx.notes.append(f"--logs {exc}")
        else:
            text_logs.append(p)
    run, console = (
        _read_text_logs(ctx, text_logs, config, name, window_lines) if text_logs else (None, [])
    )
    for p in golden:
        try:
            for s in load_values(p, "golden", str(p)):
                (ctx.goldens if s.role == "golden" else ctx.actuals).append(s)
        except (TooDeep, TooBig) as exc:
            ctx.notes.append(f"--golden {exc}")
    ctx.notes.append("no repository given: gates, config and source candidates were not collected")
    return Evidence(ctx, console, recompute(ctx) if ctx.goldens else [], None, run)


def _read_text_logs(ctx, text_logs: list[Path], config, name: str | None, window_lines: int):
    """The text logs read once by the console-log reader (the run), their lines tapped for the
    evidence scan up to :data:`RAW_LINES_CAP`; over it, the scan reads the lines the reader kept
    and a note says so. Returns (run, console evidence)."""
    from .ci.logs import scan_logs
    from .formats.consolelog import load_logs
    from .rundata import ConsoleLine

    raw: dict[int, list] = {i: [] for i in range(len(text_logs))}
    index = {id(p): i for i, p in enumerate(text_logs)}
    held = [0]

    def tap(path, lineno: int, text: str) -> None:
        if held[0] < RAW_LINES_CAP:
            raw[index[id(path)]].append(ConsoleLine(str(path), lineno, text))
        held[0] += 1

    run = load_logs(text_logs, config, name=name, tap=tap)
    if len(text_logs) == 1:
        # one file whose training counter starts over (trainings one after another): the last
        # training is the run, as the console format reader (``mlaudit audit FILE``) reads it
        from .formats.console import split_launches

        split_launches(run, "stdin" if str(text_logs[0]) == "-" else Path(str(text_logs[0])).name)
    ctx.notes += [f"--logs {w}" for w in run.warnings if w.endswith("(skipped)")]
    over = held[0] > RAW_LINES_CAP
    files: list[tuple[Path | list[ConsoleLine], str]] = []
    for i, p in enumerate(text_logs):
        lines = raw[i]
        if over:  # the reader's retained lines of this file, in the file's own numbering
            src = p.name if str(p) != "-" else "stdin"
            lines = [ConsoleLine(str(p), c.lineno, c.text) for c in run.console if c.source == src]
        files.append((lines, "stdin" if str(p) == "-" else str(p)))
    if over:
        ctx.notes.append(
            f"the logs hold {held[0]:,} lines, more than the {RAW_LINES_CAP:,} "
            "kept for the evidence scan: it read the lines the console reader "
            "kept (head, tail, failure-signature and traceback lines with "
            "context), not every line"
        )
    return run, scan_logs(ctx, files, window_lines)
