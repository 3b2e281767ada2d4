"""``mlaudit evidence``: the evidence pass of a failure, each item cited by file:line, no verdict."""

from __future__ import annotations

import json
from pathlib import Path

import typer

from .cmd_ci import _VariadicCommand


def register(app: typer.Typer) -> None:
    @app.command("evidence", cls=_VariadicCommand)
    def evidence_cmd(
        repo: Path = typer.Option(
            None,
            "--repo",
            help="Repository root (tests, scripts, golden "
            "files, configs). Without it only the logs "
            "are read.",
        ),
        logs: list[Path] = typer.Option(
            ...,
            "--logs",
            help="Log file(s); .json/.csv files are read "
            "as actual metric values. Several may "
            "follow one --logs.",
        ),
        golden: list[Path] = typer.Option(
            [],
            "--golden",
            help="Golden-value file(s) (JSON or CSV); default: the repo's golden files.",
        ),
        out: Path = typer.Option(
            None, "--out", "-o", help="Write the evidence JSON to FILE (default: stdout)."
        ),
        window: int = typer.Option(
            3, "--window", min=0, max=50, help="Context lines kept on each side of a cited line."
        ),
    ) -> None:
        """Collect a failure's evidence: failure, pass and metric lines with context windows, test
        outcomes, config and source candidates, the gates the repo applies and every gated metric
        recomputed from the raw values; each item with file:line. No verdict: the first pass an
        analyst or agent starts from (`mlaudit ci` decides on this same collection)."""
        import os
        import traceback

        from mlaudit_core.errors import MlauditError
        from mlaudit_core.evidence import collect
        from mlaudit_core.redact import redact_obj

        from ._common import err_console, fail, refuse_input_as_output

        if out is not None and out.exists() and out.is_dir():
            fail(f"--out {out}: is a directory")
        refuse_input_as_output("--out", out, [*logs, *(golden or [])])
        try:
            ev = collect(repo, logs, golden, window_lines=window)
        except MlauditError as exc:
            fail(str(exc))
        except Exception as exc:  # a bug: one line, and the traceback on request
            if os.environ.get("MLAUDIT_DEBUG"):
                traceback.print_exc()
            fail(f"internal error while collecting evidence: {type(exc).__name__}: {exc}", code=3)
        text = json.dumps(redact_obj(ev.to_dict()), indent=2, default=str) + "\n"
        if out is None:
            typer.echo(text, nl=False)
            return
        try:
            out.parent.mkdir(parents=True, exist_ok=True)
            out.write_text(text, encoding="utf-8")
        except OSError as exc:
            fail(f"--out {out}: cannot write ({exc.strerror or type(exc).__name__})")
        c = ev.counts()
        err_console.print(
            f"wrote {out}: " + ", ".join(f"{v} {k.replace('_', ' ')}" for k, v in c.items()),
            markup=False,
            highlight=False,
            soft_wrap=True,
        )
