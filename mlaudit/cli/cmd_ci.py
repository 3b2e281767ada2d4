"""``mlaudit ci``: audit an ML CI failure from a repository, its logs and golden values."""

from __future__ import annotations

import json
from pathlib import Path

import typer
from typer.core import TyperCommand

from ._common import CONFIG, FAIL_ON, FORMAT, VERBOSE, FailOn, Format

_VARIADIC = ("--logs", "--golden")


class _VariadicCommand(TyperCommand):
    """Lets ``--logs a.log b.log`` (and ``--golden``) take several files, as ``FILE...`` promises.

    Click options take one value each; the files that follow a variadic option
    up to the next option are rewritten as repeated options before parsing.
    """

    def parse_args(self, ctx, args):
        out, current = [], None
        for a in args:
            if a.startswith("-"):
                name = a.split("=", 1)[0]
                current = name if name in _VARIADIC and "=" not in a else None
                out.append(a)
            elif current and out and out[-1] != current:
                out += [current, a]
            else:
                out.append(a)
        return super().parse_args(ctx, out)


def _github(report, machine_stdout: bool) -> None:
    """GitHub Actions: append the job summary to $GITHUB_STEP_SUMMARY when set, and print
    ``::error file=...,line=...::`` annotations for the failing gate when GITHUB_ACTIONS=true
    (on stdout, or on stderr when stdout carries JSON; the runner reads commands from both)."""
    import os
    import sys

    from mlaudit_core.ci.github import annotations, step_summary

    path = os.environ.get("GITHUB_STEP_SUMMARY")
    if path:
        try:
            with open(path, "a", encoding="utf-8") as f:
                f.write(step_summary(report))
        except OSError as exc:
            typer.echo(
                f"mlaudit: warning: GITHUB_STEP_SUMMARY {path}: not written ({exc})", err=True
            )
    if os.environ.get("GITHUB_ACTIONS") == "true" and report.verdict.cause.value != "healthy":
        stream = sys.stderr if machine_stdout else sys.stdout
        for line in annotations(report):
            print(line, file=stream)
        stream.flush()
    if os.environ.get("BUILDKITE") == "true":
        _buildkite(report)


def _buildkite(report) -> None:
    """Buildkite (the agent sets ``BUILDKITE=true`` in every job): the same Markdown as GitHub's
    job summary becomes a build annotation, ``buildkite-agent annotate --style STYLE --context
    mlaudit-ci`` with the body on stdin (re-running the step replaces it: same context). A
    missing agent or a failed call is one warning line; the audit's exit code is unchanged."""
    import os
    import shutil
    import subprocess

    from mlaudit_core.ci.github import buildkite_style, step_summary

    agent = shutil.which("buildkite-agent")
    if agent is None:
        typer.echo(
            "mlaudit: warning: BUILDKITE=true but buildkite-agent is not on PATH; no annotation",
            err=True,
        )
        return
    context = os.environ.get("MLAUDIT_BUILDKITE_CONTEXT", "mlaudit-ci")
    try:
        p = subprocess.run(
            [agent, "annotate", "--style", buildkite_style(report), "--context", context],
            input=step_summary(report),
            text=True,
            capture_output=True,
            timeout=60,
            check=False,
        )
    except (OSError, subprocess.TimeoutExpired) as exc:
        typer.echo(f"mlaudit: warning: buildkite-agent annotate failed ({exc})", err=True)
        return
    if p.returncode != 0:
        err = (p.stderr or p.stdout).strip().splitlines()
        typer.echo(
            f"mlaudit: warning: buildkite-agent annotate exited {p.returncode}"
            + (f": {err[-1][:200]}" if err else ""),
            err=True,
        )


def register(app: typer.Typer) -> None:
    @app.command("ci", cls=_VariadicCommand)
    def ci(
        repo: Path = typer.Option(
            ..., "--repo", help="Repository root (tests, scripts, golden files)."
        ),
        logs: list[Path] = typer.Option(
            ...,
            "--logs",
            help="CI log file(s); .json/.csv files are read as actual "
            "metric values. Several may follow one --logs.",
        ),
        golden: list[Path] = typer.Option(
            [],
            "--golden",
            help="Golden-value file(s) (JSON or CSV); default: golden files found in the repo.",
        ),
        schema: Path = typer.Option(
            None,
            "--schema",
            help="Write output that validates against this JSON Schema (to --out, else stdout).",
        ),
        claims: Path = typer.Option(
            None,
            "--claims",
            help="A PR description / results note whose numeric "
            "claims are checked against the telemetry.",
        ),
        out: Path = typer.Option(
            None,
            "--out",
            "-o",
            help="Write the report to FILE (.json, .md or .html by "
            "suffix; the schema document with --schema).",
        ),
        fmt: Format = FORMAT,
        fail_on: FailOn = FAIL_ON,
        config: Path = CONFIG,
        verbose: bool = VERBOSE,
    ) -> None:
        """Audit an ML CI failure: real regression, or gate / setup / drift / runtime problem?

        Collects failure, pass and metric lines from the logs; finds how the repo gates metrics
        (golden files, pytest.approx, assert_allclose, rtol/atol, exact equality, timing thresholds,
        timeouts, Megatron CHECK_THRESHOLDS); recomputes every gated metric from the raw values;
        classifies the failure and recommends the minimal action.
        """
        import os
        import traceback

        from mlaudit_core.audit import audit_ci
        from mlaudit_core.errors import MlauditError

        from ._common import emit, exit_code, fail, settings_or_fail, write_out

        settings = settings_or_fail(config)
        schema_doc = None
        if schema is not None:
            try:
                schema_doc = json.loads(schema.read_text(encoding="utf-8"))
            except FileNotFoundError:
                fail(f"--schema {schema}: file not found")
            except (json.JSONDecodeError, UnicodeDecodeError) as exc:
                fail(f"--schema {schema}: not valid JSON: {exc}")
        try:
            report = audit_ci(repo, logs, golden, claims=claims, settings=settings)
            doc = None
            if schema_doc is not None:
                from mlaudit_core.ci.schema_out import fill_schema

                doc = fill_schema(report, schema_doc)
        except MlauditError as exc:
            fail(str(exc))
        except Exception as exc:  # a bug: one line, and the traceback on request
            if os.environ.get("MLAUDIT_DEBUG"):
                traceback.print_exc()
            fail(
                f"internal error while auditing the CI failure: {type(exc).__name__}: {exc}", code=3
            )
        _github(
            report,
            machine_stdout=doc is not None and not out or fmt in (Format.json, Format.compact),
        )
        if doc is not None:
            text = json.dumps(doc, indent=2, default=str) + "\n"
            if out:
                out.parent.mkdir(parents=True, exist_ok=True)
                out.write_text(text, encoding="utf-8")
                emit(report, fmt, verbose)
            else:
                typer.echo(text, nl=False)
        else:
            emit(report, fmt, verbose)
            if out:
                write_out(report, out)
        raise typer.Exit(exit_code(report, fail_on, settings))
