"""The console script's usage errors: one line on stderr naming the command and the problem,
exit 2; help and --version unchanged; audit exit codes pass through."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

MLAUDIT = str(Path(sys.executable).with_name("mlaudit"))
CASE = Path(__file__).parent / "data" / "cases" / "oom-in-evaluation" / "traceback.log"


def _run(*args: str, cwd=None) -> subprocess.CompletedProcess:
    return subprocess.run([MLAUDIT, *args], capture_output=True, text=True, timeout=120, cwd=cwd)


@pytest.mark.parametrize(
    "args, message",
    [
        (["mlflow", "--format", "bogus", "r"], "mlaudit mlflow: Invalid value for '--format'"),
        (["mlflow"], "mlaudit mlflow: Missing argument"),
        (["nosuch"], "mlaudit: No such command 'nosuch'"),
        (["logs", "--bogus", "x"], "mlaudit logs: No such option: --bogus"),
        (["watch", "mlflow", "--poll-interval", "0"], "mlaudit watch mlflow: Invalid value"),
        (["logs", str(CASE), "--out", "report.pdf"], "mlaudit logs: Invalid value for '--out'"),
        (["logs", str(CASE), "--out", "report"], "mlaudit logs: Invalid value for '--out'"),
    ],
)
def test_usage_errors_are_one_line_exit_2(args, message, tmp_path):
    p = _run(*args, cwd=tmp_path)
    assert p.returncode == 2, p.stderr
    lines = p.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith(message), p.stderr
    assert "--help" in lines[0] and "╭" not in p.stderr and p.stdout == ""
    assert list(tmp_path.iterdir()) == []


def test_no_such_path_either_names_the_missing_path(tmp_path):
    """``mlaudit OUTPUT_DIR`` with a mistyped folder name: the one line says that no file or
    folder of that name exists, not only that no command has it; a near command name keeps
    click's suggestion alone."""
    p = _run("outdir", cwd=tmp_path)
    lines = p.stderr.strip().splitlines()
    assert p.returncode == 2 and len(lines) == 1, p.stderr
    assert f"no file or folder 'outdir' in {tmp_path}" in lines[0], p.stderr
    near = _run("mlfow", "x", cwd=tmp_path)
    assert near.returncode == 2 and "Did you mean 'mlflow'?" in near.stderr, near.stderr
    assert "no file or folder" not in near.stderr


def test_help_version_and_audit_exit_codes_pass_through(tmp_path):
    assert _run("--version").stdout.startswith("mlaudit ")
    bare = _run()
    assert "Usage" in bare.stdout + bare.stderr and "Commands" in bare.stdout + bare.stderr
    assert _run("logs", "--help").returncode == 0
    assert (
        _run(
            "logs",
            str(CASE),
            "--fail-on",
            "info",
            "--format",
            "json",
            "--out",
            str(tmp_path / "r.json"),
        ).returncode
        == 1
    )
    assert (
        _run(
            "logs",
            str(CASE),
            "--fail-on",
            "never",
            "--format",
            "json",
            "--out",
            str(tmp_path / "r.json"),
        ).returncode
        == 0
    )
    assert _run("logs", str(tmp_path / "missing.log")).returncode == 2


@pytest.mark.parametrize(
    "value, message",
    [
        ("nan", "factor: Input should be a finite number"),
        ("inf", "factor: Input should be a finite number"),
        ("-1", "factor must be >= 0 (got -1.0)"),
        ('"big"', "factor: Input should be a valid number, unable to parse string as a number"),
    ],
)
def test_out_of_range_detector_parameters_are_one_line_exit_2(value, message, tmp_path):
    (tmp_path / "mlaudit.toml").write_text(f"[tool.mlaudit.detectors.OP001]\nfactor = {value}\n")
    p = _run("logs", str(CASE), "--format", "json", cwd=tmp_path)
    assert p.returncode == 2 and p.stdout == ""
    assert p.stderr.strip() == (
        f"mlaudit: error: {tmp_path / 'mlaudit.toml'}: [tool.mlaudit.detectors.OP001] {message}"
    )


def test_missing_default_mlflow_store_names_the_option(tmp_path):
    """With no --tracking-uri and no MLFLOW_TRACKING_URI, MLflow's default store (a path the
    user never gave) is missing: the line says how to name the store, and nothing is made."""
    import os

    env = {k: v for k, v in os.environ.items() if k != "MLFLOW_TRACKING_URI"}
    p = subprocess.run(
        [MLAUDIT, "mlflow", "0123abcd"],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=tmp_path,
        env=env,
    )
    assert p.returncode == 2
    assert p.stderr.strip().endswith(
        "no such MLflow database file (MLflow's default store for "
        "this directory: give --tracking-uri/-u or set "
        "MLFLOW_TRACKING_URI)"
    )
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize(
    "args, message",
    [
        (["wandb", "ent/p/r1", "-f"], "mlaudit wandb: Option '-f' requires an argument."),
        (["watch", "mlflow", "-e"], "mlaudit watch mlflow: Option '-e' requires an argument."),
        (["logs", str(CASE), "--out"], "mlaudit logs: Option '--out' requires an argument."),
        (
            ["watch", "mlflow", "-e", "x", "--concurrency", "100000"],
            "mlaudit watch mlflow: Invalid value for '--concurrency' / '-j': Input should be less than "
            "or equal to 64",
        ),
        (
            ["batch", "mlflow", "-e", "x", "--jobs", "100000"],
            "mlaudit batch mlflow: Invalid value for '--jobs' / '-j': Input should be less than or "
            "equal to 64",
        ),
        *[
            (
                ["watch", "mlflow", "-e", "x", "--poll-interval", v],
                "mlaudit watch mlflow: Invalid value for '--poll-interval': Input should be less than or "
                "equal to 604800",
            )
            for v in ("inf", "1e10", "nan")
        ],
        (
            ["logs", str(CASE), "--out", "r.pdf"],
            "mlaudit logs: Invalid value for '--out' / '-o': r.pdf: the suffix must be .json, "
            ".md/.markdown/.txt or .html/.htm (got .pdf)",
        ),
    ],
)
def test_subcommand_usage_errors_name_the_subcommand(args, message, tmp_path):
    """Option errors raised by click's parser carry no context; the line still names the
    subcommand whose option it is, and bounds refuse values that exhausted threads or
    overflowed the watcher's wait before anything ran."""
    p = _run(*args, cwd=tmp_path)
    assert p.returncode == 2, p.stderr
    cmd = message.split(":")[0]
    assert p.stderr == f"{message} (see '{cmd} --help')\n"
    assert p.stdout == "" and list(tmp_path.iterdir()) == []


def test_out_under_a_file_or_read_only_dir_is_refused_before_the_audit(tmp_path):
    """--out is checked before loading: one usage line, no report printed, nothing written."""
    (tmp_path / "afile").write_text("x")
    p = _run("logs", str(CASE), "--format", "json", "--out", "afile/r.json", cwd=tmp_path)
    assert p.returncode == 2 and p.stdout == ""
    assert p.stderr == (
        "mlaudit logs: Invalid value for '--out' / '-o': cannot write the report: "
        "a parent of afile/r.json is not a directory (afile) "
        "(see 'mlaudit logs --help')\n"
    )
    p = _run("logs", str(CASE), "--format", "json", "--out", "afile", cwd=tmp_path)
    assert p.returncode == 2 and p.stdout == "" and "the suffix must be .json" in p.stderr
    assert sorted(x.name for x in tmp_path.iterdir()) == ["afile"]
    assert (tmp_path / "afile").read_text() == "x"


def test_write_out_names_a_parent_that_is_a_file(tmp_path, capsys):
    """write_out itself (cmd_ci calls it without the option check): the parent is named."""
    import numpy as np
    import typer

    from mlaudit.cli._common import write_out
    from mlaudit_core import MetricTable, RunData, RunIdentity, RunStatus, audit

    steps = np.arange(1, 101)
    run = RunData(
        RunIdentity("test", "r1", "r1"),
        status=RunStatus.FINISHED,
        metrics=MetricTable(["train/loss"] * 100, steps, 2.0 * np.exp(-steps / 30)),
    )
    (tmp_path / "afile").write_text("x")
    out = tmp_path / "afile" / "r.json"
    with pytest.raises(typer.Exit) as exc:
        write_out(audit(run), out)
    assert exc.value.exit_code == 2
    err = " ".join(capsys.readouterr().err.split())
    assert f"a parent of {out} is not a directory" in err and "File exists" not in err


# A command added to the real app, run through the real console-script entry point in a
# subprocess: the only way to reach main()'s handlers for errors no command lets escape.
_RAISE = """
import sys, typer
from mlaudit.cli import app, main

@app.command("boom")
def boom(kind: str) -> None:
    if kind == "abort":
        raise typer.Abort()
    if kind == "interrupt":
        raise KeyboardInterrupt
    if kind == "exit":
        raise typer.Exit(4)
    raise RuntimeError("first line of the bug, token=ghp_" + "a" * 36 + "\\nsecond line")

sys.argv[0] = "mlaudit"
main()
"""


def _boom(kind: str, **env: str) -> subprocess.CompletedProcess:
    import os

    return subprocess.run(
        [sys.executable, "-c", _RAISE, "boom", kind],
        capture_output=True,
        text=True,
        timeout=120,
        env={**os.environ, **env},
    )


def test_an_internal_error_is_one_line_exit_3():
    p = _boom("bug")
    assert p.returncode == 3, p.stderr
    assert p.stderr == (
        "mlaudit: internal error: RuntimeError: first line of the bug, token=[REDACTED]\n"
    )
    debug = _boom("bug", MLAUDIT_DEBUG="1")
    assert debug.returncode == 3
    assert "Traceback (most recent call last)" in debug.stderr and "second line" in debug.stderr
    assert debug.stderr.endswith(
        "mlaudit: internal error: RuntimeError: first line of the bug, token=[REDACTED]\n"
    )


def test_abort_interrupt_and_exit_codes():
    abort = _boom("abort")
    assert (abort.returncode, abort.stderr) == (1, "Aborted!\n")
    interrupt = _boom("interrupt")
    assert (interrupt.returncode, interrupt.stderr) == (130, "")
    exited = _boom("exit")
    assert (exited.returncode, exited.stderr) == (4, "")


@pytest.mark.parametrize(
    "args",
    [
        ["watch", "mlflow", "-e", "x", "--since", "2999-01-01"],
        ["batch", "mlflow", "-e", "x", "--since", "2999-01-01"],
    ],
)
def test_a_since_in_the_future_is_refused(args, tmp_path):
    """A --since in the future would audit nothing, forever: one line, exit 2, nothing made."""
    import os

    env = {
        **os.environ,
        "MLFLOW_TRACKING_URI": f"sqlite:///{tmp_path / 'nothing.db'}",
        "COLUMNS": "300",
    }
    p = subprocess.run(
        [MLAUDIT, *args], capture_output=True, text=True, timeout=120, cwd=tmp_path, env=env
    )
    assert p.returncode == 2
    assert (
        p.stderr == "mlaudit: error: --since '2999-01-01': in the future (no run has ended "
        "after it yet)\n"
    )
    assert list(tmp_path.iterdir()) == []


def test_mlaudit_toml_with_both_forms_is_one_line_exit_2(tmp_path):
    (tmp_path / "mlaudit.toml").write_text(
        "[tool.mlaudit]\nfail_on = 'error'\n\n[detectors.OP001]\nfactor = nan\n"
    )
    p = _run("logs", str(CASE), "--format", "json", cwd=tmp_path)
    assert p.returncode == 2 and p.stdout == ""
    assert p.stderr.strip() == (
        f"mlaudit: error: {tmp_path / 'mlaudit.toml'}: has both "
        "[tool.mlaudit] and top-level keys (detectors); use one form"
    )


def test_audit_formats_needs_no_path(tmp_path):
    """docs/formats.md and 'mlaudit audit --help' say --formats lists the readers and exits; a new
    user runs it without a PATH (NOTES 2026-12-01 17:40). Without --formats PATH stays required."""
    p = _run("audit", "--formats", cwd=tmp_path)
    assert p.returncode == 0, p.stderr
    names = [line.split()[0] for line in p.stdout.splitlines() if line.strip()]
    assert "trainer_state" in names and "tensorboard" in names
    missing = _run("audit", cwd=tmp_path)
    assert missing.returncode == 2 and "Missing argument" in missing.stderr
    assert list(tmp_path.iterdir()) == []


def test_help_texts_print_as_written(tmp_path):
    """Command summaries in a group's list are one paragraph (typer's rich mode kept a wrapped
    docstring's line breaks: 'ClearML's public' / 'Monitor class ...' on separate ragged lines)
    and brackets are not eaten as rich markup ('mlaudit[mcp]' printed as 'mlaudit')."""
    import os

    env = {**os.environ, "COLUMNS": "200"}

    def run(*args):
        p = subprocess.run(
            [MLAUDIT, *args], capture_output=True, text=True, timeout=120, cwd=tmp_path, env=env
        )
        assert p.returncode == 0, p.stderr
        return p.stdout

    assert "pip install 'mlaudit[mcp]'" in run("mcp", "--help")
    assert "(pip install 'mlaudit[mcp]')" in run("--help")
    # 200 columns hold each of these summaries' first line; a kept docstring break would split it
    watch = run("watch", "--help")
    assert "ClearML's public Monitor class is the trigger" in watch
    serve = run("serve", "--help")
    assert "audit the source run and tag the model version" in serve


def test_audit_an_empty_path_is_one_line_exit_2(tmp_path, monkeypatch):
    """``mlaudit audit ""`` (an unset ``$RUN``) is refused; ``Path("")`` would be the current
    folder, whose runs would be audited and written back to."""
    from typer.testing import CliRunner

    from mlaudit.cli import app

    (tmp_path / "r1").mkdir()
    (tmp_path / "r1" / "metrics.csv").write_text("step,loss\n1,2.0\n2,1.5\n3,1.2\n")
    monkeypatch.chdir(tmp_path)
    for empty in ("", "  "):
        res = CliRunner().invoke(app, ["audit", empty])
        assert res.exit_code == 2, res.output
        assert "empty path" in res.output and "r1" not in res.output
    assert sorted(p.name for p in (tmp_path / "r1").iterdir()) == ["metrics.csv"]


def test_route_path_a_symlink_loop_or_dangling_link_is_named_as_such(tmp_path, monkeypatch, capsys):
    """``mlaudit runlink`` where runlink is a link loop or points nowhere: one line naming the
    link and what is wrong (was: "No such command 'runlink'" and "no such file or folder")."""
    (tmp_path / "loop").symlink_to(tmp_path / "loop2")
    (tmp_path / "loop2").symlink_to(tmp_path / "loop")
    (tmp_path / "gone").symlink_to(tmp_path / "deleted-run")
    from mlaudit.cli import main

    monkeypatch.chdir(tmp_path)
    for name, problem in (("loop", "symbolic link loop"), ("gone", "deleted-run, which")):
        for args in ([name], ["audit", name]):
            monkeypatch.setattr(sys, "argv", ["mlaudit", *args])
            with pytest.raises(SystemExit) as exit_:
                main()
            err = capsys.readouterr().err
            assert exit_.value.code == 2, err
            (line,) = [ln for ln in err.splitlines() if ln.strip()]
            assert line.startswith(f"mlaudit: error: {name}: ") and problem in line, line
