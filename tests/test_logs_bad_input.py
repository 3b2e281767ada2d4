"""Bad and hostile log input: one clear message (exit 2) or a report that says what was not read; never a traceback."""

from __future__ import annotations

import gzip
import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from mlaudit.cli import app
from mlaudit_core.errors import InputError
from mlaudit_core.formats.consolelog import load_logs
from mlaudit_core.formats.consolelog.reader import MAX_LINE_BYTES

GOOD = "step=1 loss=2.0\nstep=2 loss=1.5\nstep=3 loss=1.2\n"


def run_cli(*args: str):
    res = CliRunner().invoke(app, ["logs", *args])
    assert "Traceback" not in res.output, res.output
    assert not isinstance(res.exception, Exception) or isinstance(res.exception, SystemExit), (
        res.exception
    )
    return res


def one_error_line(res) -> str:
    assert res.exit_code == 2, res.output
    lines = [ln for ln in res.stderr.splitlines() if ln.strip()]
    assert len(lines) == 1 and lines[0].startswith("mlaudit: error: "), res.stderr
    return lines[0]


def test_binary_file(tmp_path):
    p = tmp_path / "model.bin"
    p.write_bytes(b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR" + bytes(range(256)) * 50)
    line = one_error_line(run_cli(str(p)))
    assert f"{p}: binary file (NUL bytes in the first 8 KiB), not a text log" in line


def test_empty_file(tmp_path):
    p = tmp_path / "empty.log"
    p.write_bytes(b"")
    assert "empty.log: empty file (0 bytes), nothing to audit" in one_error_line(run_cli(str(p)))


def test_missing_file_and_directory(tmp_path):
    assert "nope.log: no such file" in one_error_line(run_cli(str(tmp_path / "nope.log")))
    assert "is a directory, not a log file" in one_error_line(run_cli(str(tmp_path)))


def test_every_reason_is_named_when_no_file_is_readable(tmp_path):
    (tmp_path / "a.log").write_bytes(b"")
    (tmp_path / "b.bin").write_bytes(b"\x00\x01")
    line = one_error_line(run_cli(str(tmp_path / "a.log"), str(tmp_path / "b.bin")))
    assert "a.log: empty file" in line and "b.bin: binary file" in line


def test_unreadable_file_next_to_a_good_one_is_reported_not_fatal(tmp_path):
    good, bad = tmp_path / "train.log", tmp_path / "core.bin"
    good.write_text(GOOD)
    bad.write_bytes(b"\x7fELF\x02\x01\x01\x00\x00\x00")
    res = run_cli(str(good), str(bad), "--format", "json")
    assert res.exit_code == 0, res.output
    report = json.loads(res.stdout)
    assert any("core.bin: binary file" in w and "(skipped)" in w for w in report["warnings"])
    assert report["key_metrics"]["train_loss"]["final"] == 1.2


def test_non_utf8_bytes_are_read_and_reported(tmp_path):
    p = tmp_path / "latin1.log"
    p.write_bytes(
        GOOD.encode()
        + "step=4 loss=1.1 note=caf\xe9 \xff\xfe\n".encode("latin-1")
        + b"step=5 loss=1.0\n"
    )
    run = load_logs([p])
    assert run.metrics.series("train/loss").values.tolist() == [2.0, 1.5, 1.2, 1.1, 1.0]
    assert run.warnings == [
        (
            f"{p}: 1 line(s) are not valid UTF-8 (first at line 4); they were read with "
            "replacement characters"
        )
    ]
    res = run_cli(str(p), "--format", "json")
    assert res.exit_code == 0
    assert any("not valid UTF-8" in w for w in json.loads(res.stdout)["warnings"])


def test_utf16_and_gzip_logs(tmp_path):
    u16 = tmp_path / "powershell.log"
    u16.write_bytes(GOOD.encode("utf-16"))  # with BOM, as PowerShell's Tee-Object writes
    gz = tmp_path / "train.log.gz"
    gz.write_bytes(gzip.compress(GOOD.encode()))
    for p in (u16, gz):
        assert load_logs([p]).metrics.series("train/loss").values.tolist() == [2.0, 1.5, 1.2]


def test_200_mb_single_line(tmp_path):
    p = tmp_path / "one-line.log"
    chunk = b"0123456789abcdef" * 4096  # 64 KiB without a newline
    with open(p, "wb") as f:
        f.writelines(chunk for _ in range(200 * 16))
        f.write(b"\nstep=1 loss=0.5\n")
    assert p.stat().st_size >= 200 * 2**20
    run = load_logs([p])
    assert run.warnings[0] == (
        f"{p}: 1 line(s) longer than 1 MiB (first at line 1, longest 200 MiB); only "
        "their first 1 MiB were read"
    )
    assert run.metrics.series("train/loss").values.tolist() == [
        0.5
    ]  # the line after it is still read
    assert len(run.console[0].text) <= MAX_LINE_BYTES
    res = run_cli(str(p), "--format", "json")
    assert res.exit_code == 0 and "longer than 1 MiB" in res.stdout


def test_huge_carriage_return_progress_line_is_read_update_by_update(tmp_path):
    p = tmp_path / "tqdm.log"
    with open(p, "wb") as f:
        f.writelines(
            f"\r{i * 100 // 16000:3d}%|#   | {i}/16000 [00:01<00:00, 9.5it/s, loss={3 - i / 16000:.5f}, "
            "lr=1.0e-04, v_num=0]".encode()
            for i in range(1, 16001)
        )
        f.write(b"\n")
    assert p.stat().st_size > MAX_LINE_BYTES
    run = load_logs([p])
    loss = run.metrics.series("train/loss")
    assert len(loss) == 16000 and loss.steps[-1] == 16000 and loss.values[-1] == pytest.approx(2.0)
    assert not run.warnings


def test_log_without_any_metric_line_is_a_report_that_says_so(tmp_path):
    p = tmp_path / "notes.log"
    p.write_text("starting\nall good\n")
    res = run_cli(str(p), "--format", "json")
    assert res.exit_code == 0
    report = json.loads(res.stdout)
    assert report["verdict"]["cause"] == "inconclusive"
    assert any("no metric lines were recognised" in w for w in report["warnings"])


def test_bad_config_file(tmp_path):
    log = tmp_path / "train.log"
    log.write_text(GOOD)
    bad = tmp_path / "config.yaml"
    bad.write_text("a: [1, 2\n")
    line = one_error_line(run_cli(str(log), "--config", str(bad)))
    assert f"--config {bad}: not valid YAML" in line
    assert "no such file" in one_error_line(
        run_cli(str(log), "--config", str(tmp_path / "none.txt"))
    )


def test_load_logs_raises_input_error_not_oserror(tmp_path):
    with pytest.raises(InputError, match="no such file"):
        load_logs([tmp_path / "missing.log"])
    with pytest.raises(InputError, match="no log file given"):
        load_logs([])


def test_nothing_is_written_without_out(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "train.log").write_text(GOOD)
    res = run_cli("train.log")
    assert res.exit_code == 0
    assert sorted(p.name for p in tmp_path.iterdir()) == ["train.log"]
    out = tmp_path / "r" / "report.md"
    assert run_cli("train.log", "--out", str(out)).exit_code == 0
    assert out.read_text().startswith("# mlaudit")


def test_redaction_of_printed_secrets(tmp_path):
    p = tmp_path / "train.log"
    p.write_text(
        "WANDB_API_KEY=0123456789abcdef0123456789abcdef01234567 token\n"
        'Traceback (most recent call last):\n  File "t.py", line 3, in train_step\n'
        "ValueError: bad url https://user:hunter2@example.com/data\n"
    )
    res = run_cli(str(p), "--format", "json")
    assert res.exit_code == 0
    assert (
        "hunter2" not in res.stdout and "0123456789abcdef0123456789abcdef01234567" not in res.stdout
    )


def test_stdin(tmp_path):
    res = CliRunner().invoke(app, ["logs", "-", "--format", "json"], input=GOOD)
    assert res.exit_code == 0, res.output
    assert json.loads(res.stdout)["key_metrics"]["train_loss"]["points"] == 3


def test_help_names_the_formats():
    res = CliRunner().invoke(app, ["logs", "--help"])
    assert res.exit_code == 0 and "Megatron" in res.stdout and "--config" in res.stdout


@pytest.mark.parametrize(
    "junk", [b"\xff" * 100, b"\r\r\r\n\n", "é".encode() * 10, b"[" * 5000 + b"\n"]
)
def test_odd_bytes_never_crash(tmp_path, junk):
    p = tmp_path / "odd.log"
    p.write_bytes(junk)
    res = run_cli(str(p), "--format", "json")
    assert res.exit_code == 0, res.output


def test_paths_are_strings_or_paths(tmp_path):
    p = tmp_path / "t.log"
    p.write_text(GOOD)
    assert len(load_logs([str(p)]).metrics) == len(load_logs([Path(p)]).metrics) == 3


def test_line_reader_fifo_without_a_writer_is_one_error_not_a_hang(tmp_path):
    """A named pipe nobody writes to: open() would wait for a writer forever. The subprocess's
    timeout is only an upper bound against that hang."""
    import os
    import subprocess
    import sys

    fifo = tmp_path / "train.log"
    os.mkfifo(fifo)
    mlaudit = str(Path(sys.executable).parent / "mlaudit")
    res = subprocess.run([mlaudit, "logs", str(fifo)], capture_output=True, text=True, timeout=120)
    assert res.returncode == 2, res.stderr
    (line,) = [ln for ln in res.stderr.splitlines() if ln.strip()]
    assert line.startswith("mlaudit: error: ") and "train.log" in line and "FIFO" in line


def test_line_reader_reads_a_process_substitution_pipe(tmp_path):
    """``mlaudit logs <(zcat train.log.gz)``: a pipe with its writer is read to its end."""
    import shutil
    import subprocess
    import sys

    bash = shutil.which("bash")
    if bash is None:
        pytest.skip("no bash for a process substitution")
    src = tmp_path / "train.log"
    src.write_text(GOOD * 20)
    mlaudit = str(Path(sys.executable).parent / "mlaudit")
    res = subprocess.run(
        [bash, "-c", f'"{mlaudit}" logs --format json <(cat "{src}")'],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert res.returncode == 0, res.stderr
    assert json.loads(res.stdout)["verdict"]


def test_line_reader_stops_at_the_size_the_log_had_when_opened(tmp_path):
    """A log still being written (appended to faster than it is parsed) is read as it was when
    the read began, and the report says later lines were not read: the read ends."""
    from mlaudit_core.formats.consolelog.reader import LineReader

    p = tmp_path / "train.log"
    p.write_text(GOOD)
    reader = LineReader(p)
    texts = []
    with p.open("a") as grow:
        for _, text in reader:
            texts.append(text)
            if len(texts) <= 3:  # a writer appending while the first lines are parsed
                grow.write("step=9 loss=0.1\n" * 1000)
                grow.flush()
    assert texts == GOOD.splitlines()
    assert any("grew while it was read" in w for w in reader.warnings), reader.warnings


def test_load_logs_a_log_still_being_written_is_a_running_run(tmp_path):
    """A log that grows while it is read (a run still training) ending on a new epoch's header
    is running, not cut short (was: 'crashed: it was cut' although lines kept coming)."""
    from mlaudit_core import audit
    from mlaudit_core.rundata import RunStatus

    p = tmp_path / "train.log"
    lines = []
    for e in range(1, 4):
        lines.append(f"Epoch {e}/10")
        lines += [f"step {e * 20 + s} loss {2.0 / (e * 20 + s):.4f}" for s in range(20)]
        lines.append(f"Epoch {e}/10 val_loss {2.5 / e:.3f}")
    p.write_text("\n".join([*lines, "Epoch 4/10"]) + "\n")
    seen = []

    def tap(path, lineno, text):  # the training appends while the first line is parsed
        seen.append(lineno)
        if len(seen) == 1:
            with p.open("a") as f:
                f.write("step 81 loss 0.02\n" * 10)

    run = load_logs([str(p)], tap=tap)
    assert run.status is RunStatus.RUNNING
    assert any("grew while it was read" in w for w in run.warnings), run.warnings
    assert audit(run).verdict.outcome.value == "running"
    # the same log read when nothing is appended: judged as it ends
    assert load_logs([str(p)]).status is RunStatus.UNKNOWN
