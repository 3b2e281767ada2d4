"""ML CI failure audit: is this CI failure a model regression, or a gate, setup, drift or runtime problem?

The workflow of ``mlaudit ci`` (see docs/ci.md):

1. :func:`collect` - evidence from the logs (failure / pass / metric lines
   with context windows, test outcomes, failed metric names, printed
   assertion figures, timeouts, infrastructure signatures, exceptions,
   environment changes) and from the repository (gates parsed with ``ast``,
   golden files, CI job timeouts, requirement pins, config candidates, the
   source files the logs point at);
2. the CI detectors (``CI001``-``CI011``) recompute every gated metric from the
   raw values and measure what failed;
3. :func:`~.classify.classify` decides the class and the minimal action;
4. with claims, the claims detectors (``CL001``-``CL003``) check them, and a
   report built on contradicted claims says ``unsupported_claim``.

The result is a standard :class:`~mlaudit_core.report.AuditReport`; with a
user JSON Schema, :func:`~.schema_out.fill_schema` shapes it to that schema.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from pathlib import Path

from ..errors import InputError
from ..rundata import ConsoleLine, MetricTable, RunData, RunIdentity, RunStatus
from .context import attach_context, context_of, recomputed
from .gates import MAX_BYTES, is_golden_file, iter_files, parse_pins, scan_ci_yaml, scan_python
from .golden import TooBig, TooDeep, load_values
from .logs import _REF_FILE, env_changes_in, read_lines, scan_logs, window
from .model import CIContext, Gate, Line, ValueSet, metric_id
from .trace import confine, trace_tests

__all__ = [
    "CIContext",
    "Gate",
    "ValueSet",
    "attach_context",
    "build_run",
    "collect",
    "context_of",
    "metric_id",
    "recomputed",
]

_VALUE_EXT = (".json", ".csv", ".tsv", ".npy", ".npz")
_CONFIG_EXT = (".yaml", ".yml", ".toml", ".cfg", ".ini")
_CONFIG_WORDS = re.compile(
    r"golden|threshold|toleran|rtol|atol|timeout|METRICS|deterministic|approx", re.IGNORECASE
)
_CI_YAML = re.compile(
    r"(^|/)(\.github/workflows/[^/]+|\.gitlab-ci[^/]*|\.circleci/[^/]+|azure-pipelines[^/]*|"
    r"jenkins[^/]*|\.buildkite/[^/]+|[^/]*ci[^/]*)\.ya?ml$",
    re.IGNORECASE,
)
_ENV_FILES = re.compile(r"dockerfile|ngc_version|\.?version|environment\.ya?ml$", re.IGNORECASE)
_SRC_REF = re.compile(
    r"File \"(?P<f1>[^\"]+)\", line (?P<l1>\d+)|(?P<f2>[\w./\-]+\.py):(?P<l2>\d+)|"
    r"(?P<f3>[\w./\-]+\.py)::(?P<t3>\w+)"
)


def _display(p: Path, repo: Path) -> str:
    try:
        return str(p.resolve().relative_to(repo.resolve()))
    except ValueError:
        return str(p)


def collect(
    repo: Path, logs: Sequence[Path], golden: Sequence[Path] = (), window_lines: int = 3
) -> tuple[CIContext, list[ConsoleLine]]:
    """Collect the evidence of a CI failure.

    Args:
        repo: the repository root (a directory).
        logs: CI log files; ``.json`` / ``.csv`` files among them are read as actual metric values.
        golden: golden-value files; when empty, golden files found in the repository are used.
        window_lines: context lines kept on each side of an evidence line.

    Returns:
        (the context, every log line as console lines).

    Raises:
        InputError: a missing repository or file, or an unreadable golden/value file.
    """
    if not repo.is_dir():
        raise InputError(f"--repo {repo}: not a directory")
    for p in [*logs, *golden]:
        if not p.is_file():
            raise InputError(f"{p}: file not found")
    ctx = CIContext(repo=str(repo), logs=[_display(p, repo) for p in logs])
    console = _read_logs(ctx, repo, logs, window_lines)
    found_golden = _scan_repo(ctx, repo, {q.resolve() for q in [*logs, *golden]})
    _load_goldens(ctx, repo, golden, found_golden)
    _follow_tests(ctx, repo, logs, golden)
    _own_value_files(ctx, repo, logs)
    _name_unnamed_gates(ctx)
    ctx.env_changes = dedupe_env(ctx.env_changes)
    _source_candidates(ctx, repo, console)
    return ctx, console


def _read_logs(
    ctx: CIContext, repo: Path, logs: Sequence[Path], window_lines: int
) -> list[ConsoleLine]:
    """Value files among the logs (``.json`` / ``.csv``: actual values, or the old code's when
    named for it), then the text logs (:func:`~.logs.scan_logs`)."""
    text_logs = []
    for p in logs:
        if p.suffix.lower() in _VALUE_EXT:
            # a value file named for the old code (metrics_main.json, reference_metrics.csv)
            side = "reference" if _REF_FILE.search(p.stem) else "actual"
            try:
                for s in load_values(p, side, _display(p, repo)):
                    _add_set(ctx, s)
            except (TooDeep, TooBig) as exc:
                ctx.notes.append(f"--logs {exc}")
        else:
            text_logs.append((p, _display(p, repo)))
    return scan_logs(ctx, text_logs, window_lines)


def _scan_repo(ctx: CIContext, repo: Path, given: set[Path]) -> list[Path]:
    """Gates, golden files, pins, config lines and environment files of the repository;
    returns the golden files found (those given on the command line are not read again)."""
    found_golden: list[Path] = []
    for f in iter_files(repo):
        rel = _display(f, repo)
        if f.resolve() in given:
            if is_golden_file(f):
                ctx.golden_files.append(rel)
            continue
        try:
            _scan_repo_file(ctx, f, rel, found_golden)
        except OSError as exc:
            ctx.notes.append(f"{rel}: unreadable ({exc})")
    return found_golden


def _scan_repo_file(ctx: CIContext, f: Path, rel: str, found_golden: list[Path]) -> None:
    name = f.name.lower()
    if name.endswith((".py", ".py.txt")):
        text = f.read_text(encoding="utf-8", errors="replace")
        gates, checked, where, notes = scan_python(text, rel)
        ctx.gates += gates
        ctx.notes += notes
        if checked is not None and ctx.checked_metrics is None:
            ctx.checked_metrics, ctx.checked_metrics_source = checked, where
    elif _CI_YAML.search(rel.replace("\\", "/")):
        ctx.gates += scan_ci_yaml(f.read_text(encoding="utf-8", errors="replace"), rel)
    if is_golden_file(f):
        ctx.golden_files.append(rel)
        found_golden.append(f)
    elif re.match(r"(requirements|constraints)[\w.\-]*\.txt$", name):
        ctx.packages_repo.update(parse_pins(f.read_text(encoding="utf-8", errors="replace")))
    elif name.endswith(_CONFIG_EXT):
        _config_lines(ctx, f.read_text(encoding="utf-8", errors="replace").split("\n"), rel)
    if _ENV_FILES.search(name):
        for i, ln in enumerate(f.read_text(encoding="utf-8", errors="replace").split("\n"), 1):
            ctx.env_changes += env_changes_in(ln, rel, i)


def _config_lines(ctx: CIContext, lines: list[str], rel: str) -> None:
    """Config lines that mention thresholds, tolerances or timeouts (at most 40)."""
    for i, ln in enumerate(lines):
        if _CONFIG_WORDS.search(ln) and len(ctx.config_candidates) < 40:
            ctx.config_candidates.append(
                Line(
                    rel,
                    i + 1,
                    ln.strip(),
                    [f"{j + 1}: {lines[j]}" for j in range(max(0, i - 1), min(len(lines), i + 2))],
                    "config",
                )
            )


def _load_goldens(
    ctx: CIContext, repo: Path, golden: Sequence[Path], found_golden: list[Path]
) -> None:
    """The golden files given (``--golden``), else the ones found in the repository."""
    for p in golden:
        try:
            ctx_sets = load_values(p, "golden", _display(p, repo))
        except (TooDeep, TooBig) as exc:
            ctx.notes.append(f"--golden {exc}")
            continue
        for s in ctx_sets:
            _add_set(ctx, s)
    if not golden:
        for f in found_golden:
            try:
                for s in load_values(f, "golden", _display(f, repo)):
                    _add_set(ctx, s)
            except InputError as exc:
                ctx.notes.append(f"golden file skipped: {exc}")


def _follow_tests(ctx: CIContext, repo: Path, logs: Sequence[Path], golden: Sequence[Path]) -> None:
    """Follow the log's tests into their source: the files they read, tolerances read from
    them (files of the old code are not what the failing test read)."""
    given_by_name = {
        q.name: q
        for q in [*logs, *golden]
        if not (q in logs and q.suffix.lower() != ".log" and _REF_FILE.search(q.stem))
    }
    for rel, (data, sources) in trace_tests(
        repo, ctx, given_by_name, load_golden=not golden
    ).items():
        try:
            text = (repo / rel).read_text(encoding="utf-8", errors="replace")
        except OSError:
            continue
        gates, _, _, _ = scan_python(text, rel, data, sources)
        ctx.gates = [g for g in ctx.gates if g.path != rel] + gates


def _own_value_files(ctx: CIContext, repo: Path, logs: Sequence[Path]) -> None:
    """A value file named like the old code's (metrics_main.json from a build of main) while no
    other values of this job exist: it is this job's own."""
    value_files = {_display(p, repo) for p in logs if p.suffix.lower() in _VALUE_EXT}
    from_files = [s for s in ctx.references if s.source in value_files]
    if from_files and not any(s.label != "log" for s in ctx.actuals):
        ctx.notes.append(
            "value file(s) "
            + ", ".join(sorted({s.source for s in from_files}))
            + " are named like the old code's, but no other values of this job were given: "
            "read as this job's values"
        )
        for s in from_files:
            s.role = "actual"
        ctx.actuals = from_files + ctx.actuals
        ctx.references = [s for s in ctx.references if s not in from_files]


def _source_candidates(ctx: CIContext, repo: Path, console: list[ConsoleLine]) -> None:
    """The sources the logs point at, with a context window from the repo; only files inside
    the repository are opened (a log can name /proc/self/environ or ../secrets), at most
    MAX_BYTES."""
    seen: set[tuple[str, int]] = set()
    refused: set[str] = set()
    for cl in console:
        for m in _SRC_REF.finditer(cl.text):
            fname = m["f1"] or m["f2"] or m["f3"]
            cand, why = confine(repo, fname)
            if cand is None:
                if fname not in refused and len(refused) < 5:
                    ctx.notes.append(
                        f"{fname} (named at {cl.source}:{cl.lineno}): {why}; not opened"
                    )
                refused.add(fname)
                continue
            line = _source_line(ctx, repo, cand, fname, m)
            if line is None or (line.source, line.line) in seen:
                continue
            seen.add((line.source, line.line))
            ctx.source_candidates.append(line)


def _source_line(ctx: CIContext, repo: Path, cand: Path, fname: str, m: re.Match) -> Line | None:
    """The source line a log reference names, with its window; None when it cannot be read."""
    found: Path | None = cand
    if not cand.is_file():
        found = (
            next((q for q in iter_files(repo) if q.name == Path(fname).name), None)
            if len(ctx.source_candidates) < 20 and not Path(fname).is_absolute()
            else None
        )
    if found is None or not found.is_file():
        return None
    cand = found
    try:
        if cand.stat().st_size > MAX_BYTES:
            return None
    except OSError:
        return None
    src_lines = read_lines(cand, _display(cand, repo))
    lineno = int(m["l1"] or m["l2"] or 0)
    if not lineno and m["t3"]:
        lineno = next(
            (x.lineno for x in src_lines if re.match(rf"\s*(async\s+)?def {m['t3']}\b", x.text)),
            1,
        )
    if not src_lines:
        return None
    idx = min(max(lineno - 1, 0), len(src_lines) - 1)
    return Line(
        _display(cand, repo),
        lineno,
        src_lines[idx].text.strip(),
        window(src_lines, idx, 3),
        "source",
    )


def _add_set(ctx: CIContext, s: ValueSet) -> None:
    {"golden": ctx.goldens, "reference": ctx.references}.get(s.role, ctx.actuals).append(s)


def _name_unnamed_gates(ctx: CIContext) -> None:
    """A comparison that names no metric (``abs(a - b) / abs(b) < TOL`` over zipped arrays)
    compares what its test loads: when the golden values the test reads hold one metric, the
    gate is about that metric."""
    by_test: dict[tuple[str, str], set[str]] = {}
    for x in ctx.traced:
        if x.status != "loaded" or x.role != "golden":
            continue
        func = x.test.split("::")[-1].split("[")[0]
        names = {m for s in ctx.goldens if s.source == x.path for m in s.metrics}
        by_test.setdefault((x.source, func), set()).update(names)
    for g in ctx.gates:
        if g.metric is None and g.function and g.kind not in ("timeout", "timing", "throughput"):
            found = by_test.get((g.path, g.function))
            if found and len(found) == 1:
                g.metric = next(iter(found))


def dedupe_env(changes: list) -> list:
    """One entry per change: complete ``old -> new`` statements first; a partial one (``... to 26.04-py3``)
    is dropped when a complete one names the same new version."""
    out: list = []
    seen: set = set()
    complete = sorted(changes, key=lambda e: not (e.old and e.new))
    for e in complete:
        key = (e.name.lower(), e.old, e.new)
        if key in seen:
            continue
        if not e.old and any(
            x.old
            and x.new
            and e.new
            and (x.new == e.new or x.new.startswith(e.new) or e.new.startswith(x.new))
            for x in out
        ):
            continue
        seen.add(key)
        out.append(e)
    return out


def build_run(ctx: CIContext, console: list[ConsoleLine]) -> RunData:
    """A RunData for the CI job: its logs as console, its actual values as metrics.

    The actual values come from explicit value files first, then from metric
    lines parsed out of the logs; a metric appears once.
    """
    series: dict[str, tuple[list[int], list[float]]] = {}
    for s in sorted(ctx.actuals, key=lambda s: s.label == "log"):
        for k, v in s.metrics.items():
            series.setdefault(k, v)
    keys, steps, values = [], [], []
    for k, (st, vals) in series.items():
        keys += [k] * len(st)
        steps += list(st)
        values += list(vals)
    failed = bool(
        ctx.failure_lines
        or ctx.failed_metrics
        or any(t.outcome in ("failed", "error") for t in ctx.tests)
    )
    name = Path(ctx.repo).name or ctx.repo
    return RunData(
        RunIdentity(
            "ci", f"{name}:{ctx.logs[0] if ctx.logs else 'no-logs'}", f"CI audit of {name}"
        ),
        status=RunStatus.FAILED if failed else RunStatus.FINISHED,
        metrics=MetricTable(keys, steps, values),
        console=console,
        environment=dict(ctx.packages_log),
    )


def _golden_run(ctx: CIContext) -> RunData | None:
    if not ctx.goldens:
        return None
    s = ctx.goldens[0]
    keys, steps, values = [], [], []
    for k, (st, vals) in s.metrics.items():
        keys += [k] * len(st)
        steps += list(st)
        values += list(vals)
    return RunData(
        RunIdentity("ci", f"golden:{s.source}", "golden values"),
        status=RunStatus.FINISHED,
        metrics=MetricTable(keys, steps, values),
    )
