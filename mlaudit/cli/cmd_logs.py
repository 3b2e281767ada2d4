"""``mlaudit logs FILE...``: audit plain console logs like any run (no write-back)."""

from __future__ import annotations

from pathlib import Path

import typer

from ._common import FAIL_ON, FORMAT, NOTIFY, OUT, VERBOSE, FailOn, Format, run_pipeline


def register(app: typer.Typer) -> None:
    @app.command("logs")
    def logs(
        files: list[str] = typer.Argument(..., metavar="FILE...",
                                          help="Console log files, read in order as one log ('-' is stdin, "
                                               ".gz is decompressed)."),
        config: list[Path] = typer.Option([], "--config", "-c",
                                          help="Run config / context file (key = value, key: value, JSON, YAML "
                                               "or TOML); its values become the run's params. Repeatable."),
        name: str = typer.Option(None, "--name", "-n", help="Display name of the run."),
        settings: Path = typer.Option(None, "--settings",
                                      help="mlaudit settings file (default: mlaudit.toml or pyproject.toml "
                                           "\\[tool.mlaudit] in the current directory or its parents)."),
        fmt: Format = FORMAT,
        out: Path = OUT,
        fail_on: FailOn = FAIL_ON,
        verbose: bool = VERBOSE,
        notify: list[str] = NOTIFY,
    ) -> None:
        """Diagnose a run from its console logs: metrics and failure signatures from plain text.

        Hugging Face Trainer, PyTorch Lightning, Keras, Megatron-LM / NeMo, fairseq,
        DeepSpeed, the PyTorch ImageNet example, tqdm bars, litgpt / nanoGPT and
        generic key=value lines are recognised (docs/logs.md). Nothing is written
        anywhere except --out.
        """
        from mlaudit_core.logs import load_logs

        def load():
            return load_logs(files, config, name=name)

        run_pipeline(load, fmt=fmt, out=out, fail_on=fail_on, config=settings, write_back=None,
                     verbose=verbose, what="log files", notify=notify)
