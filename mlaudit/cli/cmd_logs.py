"""``mlaudit logs FILE...``: audit plain console logs like any run (no write-back).

Built on the evidence pass (:func:`mlaudit_core.evidence.collect`, the collection ``mlaudit ci``
and ``mlaudit evidence`` use): the files are read once; the evidence scanner (failure, pass and
metric lines, tests, exceptions, infrastructure signatures, each with file:line) and the
console-log reader that makes the audited run share that pass. ``--evidence FILE`` writes the
collection next to the report."""

from __future__ import annotations

from pathlib import Path

import typer

from ._common import FAIL_ON, FORMAT, NOTIFY, OUT, VERBOSE, FailOn, Format, run_pipeline


def register(app: typer.Typer) -> None:
    @app.command("logs")
    def logs(
        files: list[str] = typer.Argument(
            ...,
            metavar="FILE...",
            help="Console log files, read in order as one log ('-' is stdin, .gz is decompressed).",
        ),
        config: list[Path] = typer.Option(
            [],
            "--config",
            "-c",
            help="Run config / context file (key = value, key: value, JSON, YAML "
            "or TOML); its values become the run's params. Repeatable.",
        ),
        name: str = typer.Option(None, "--name", "-n", help="Display name of the run."),
        settings: Path = typer.Option(
            None,
            "--settings",
            help="mlaudit settings file (default: mlaudit.toml or pyproject.toml "
            "\\[tool.mlaudit] in the current directory or its parents).",
        ),
        fmt: Format = FORMAT,
        out: Path = OUT,
        fail_on: FailOn = FAIL_ON,
        verbose: bool = VERBOSE,
        notify: list[str] = NOTIFY,
        evidence: Path = typer.Option(
            None,
            "--evidence",
            metavar="FILE",
            help="Also write the evidence pass (failure, pass and metric "
            "lines, exceptions, each with file:line; the format of "
            "`mlaudit evidence`) to FILE.",
        ),
    ) -> None:
        """Diagnose a run from its console logs: metrics and failure signatures from plain text.

        Hugging Face Trainer, PyTorch Lightning, Keras, Megatron-LM / NeMo, fairseq,
        DeepSpeed, the PyTorch ImageNet example, tqdm bars, litgpt / nanoGPT and
        generic key=value lines are recognised (docs/logs.md). Nothing is written
        anywhere except --out.
        """
        from mlaudit_core.evidence import collect

        from ._common import fail, refuse_input_as_output

        if evidence is not None and evidence.is_dir():
            fail(f"--evidence {evidence}: is a directory")
        refuse_input_as_output("--out", out, [*files, *(config or [])])
        refuse_input_as_output("--evidence", evidence, [*files, *(config or [])])

        def load():
            ev = collect(None, files, config=config, name=name, value_files=False)
            if evidence is not None:  # before the audit: run_pipeline ends with the exit code
                _write_evidence(evidence, ev)
            return ev.run

        run_pipeline(
            load,
            fmt=fmt,
            out=out,
            fail_on=fail_on,
            config=settings,
            write_back=None,
            verbose=verbose,
            what="log files",
            notify=notify,
        )


def _write_evidence(path: Path, ev) -> None:
    import json

    from mlaudit_core.redact import redact_obj

    from ._common import err_console, fail

    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(
            json.dumps(redact_obj(ev.to_dict()), indent=2, default=str) + "\n", encoding="utf-8"
        )
    except OSError as exc:
        fail(f"--evidence {path}: cannot write ({exc.strerror or type(exc).__name__})")
    err_console.print(
        f"wrote {path}: " + ", ".join(f"{v} {k.replace('_', ' ')}" for k, v in ev.counts().items()),
        markup=False,
        highlight=False,
        soft_wrap=True,
    )
